using System.Diagnostics;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.IO;

/// <summary>Time, managed allocations and collections of one timed region of the <c>jembench io</c> harnesses.</summary>
/// <remarks>Page faults are the process's minor faults (first touches of fresh pages), or -1 where they cannot be read.</remarks>
internal readonly record struct TimedRegion(long Timestamp, long AllocatedBytes, int Gen0, int Gen1, int Gen2, long PageFaults, double Seconds)
{
    /// <summary>Starts a region now.</summary>
    public static TimedRegion Start() =>
        new(Stopwatch.GetTimestamp(), GC.GetTotalAllocatedBytes(precise: true), GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2), MinorFaults(), 0);

    /// <summary>Ends the region: what happened since <see cref="Start"/>.</summary>
    public TimedRegion Stop()
    {
        double seconds = Stopwatch.GetElapsedTime(Timestamp).TotalSeconds;
        long faults = MinorFaults();
        return new(Timestamp, GC.GetTotalAllocatedBytes(precise: true) - AllocatedBytes,
            GC.CollectionCount(0) - Gen0, GC.CollectionCount(1) - Gen1, GC.CollectionCount(2) - Gen2,
            faults < 0 || PageFaults < 0 ? -1 : faults - PageFaults, seconds);
    }

    private static long MinorFaults() => ProcessMemory.PageFaults(Environment.ProcessId)?.Minor ?? -1;
}
