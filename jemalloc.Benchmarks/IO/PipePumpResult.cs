namespace jemalloc.Benchmarks.IO;

/// <summary>What one side of <c>jembench io --pipe</c> measured.</summary>
/// <param name="Side">The pipe's memory pool.</param>
/// <param name="Bytes">The bytes pumped through the pipe (all read back and checked).</param>
/// <param name="Segments">The writes (each one flush) the writer made.</param>
/// <param name="Seconds">Time from creating the pipe to both ends completing.</param>
/// <param name="AllocatedBytes">Managed bytes allocated during the timed region (<c>GC.GetTotalAllocatedBytes(true)</c>).</param>
/// <param name="Gen0">Generation-0 collections during the timed region.</param>
/// <param name="Gen1">Generation-1 collections during the timed region.</param>
/// <param name="Gen2">Generation-2 collections during the timed region.</param>
/// <param name="PageFaults">Minor page faults of the process during the timed region (first touches of fresh pages), or -1 if unknown.</param>
/// <param name="PeakRssBytes">Peak resident set of the process (VmHWM), or -1 if unknown.</param>
/// <param name="Rents">Blocks the <see cref="JemMemoryPool"/> rented, or -1 for the default pool (which does not count).</param>
/// <param name="Checksum">XxHash3 of every byte read: equal to the writer's and to the expected stream's.</param>
public sealed record PipePumpResult(
    PipePoolSide Side,
    long Bytes,
    long Segments,
    double Seconds,
    long AllocatedBytes,
    int Gen0,
    int Gen1,
    int Gen2,
    long PageFaults,
    long PeakRssBytes,
    long Rents,
    ulong Checksum);
