namespace jemalloc.Benchmarks.IO;

/// <summary>What one side of <c>jembench io --json</c> measured.</summary>
/// <param name="Side">The buffer writer.</param>
/// <param name="TargetBytes">The document size asked for: records are written until the document reaches it.</param>
/// <param name="InitialCapacity">The capacity the writer was created with, in bytes.</param>
/// <param name="Bytes">The bytes written (the whole document).</param>
/// <param name="Seconds">Time to create the writer and write the document into it (growths included; hashing not).</param>
/// <param name="AllocatedBytes">Managed bytes allocated during the timed region (<c>GC.GetTotalAllocatedBytes(true)</c>).</param>
/// <param name="Gen0">Generation-0 collections during the timed region.</param>
/// <param name="Gen1">Generation-1 collections during the timed region.</param>
/// <param name="Gen2">Generation-2 collections during the timed region.</param>
/// <param name="PageFaults">Minor page faults of the process during the timed region (first touches of fresh pages), or -1 if unknown.</param>
/// <param name="PeakRssBytes">Peak resident set of the process (VmHWM), or -1 if unknown.</param>
/// <param name="Sha256">SHA-256 of every written byte, in hex: equal on every side and to the reference.</param>
public sealed record JsonWriteResult(
    JsonWriterSide Side,
    long TargetBytes,
    long InitialCapacity,
    long Bytes,
    double Seconds,
    long AllocatedBytes,
    int Gen0,
    int Gen1,
    int Gen2,
    long PageFaults,
    long PeakRssBytes,
    string Sha256);
