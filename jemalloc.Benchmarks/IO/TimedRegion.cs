using System.Diagnostics;

namespace jemalloc.Benchmarks.IO;

/// <summary>Time, managed allocations and collections of one timed region of the <c>jembench io</c> harnesses.</summary>
internal readonly record struct TimedRegion(long Timestamp, long AllocatedBytes, int Gen0, int Gen1, int Gen2, double Seconds)
{
    /// <summary>Starts a region now.</summary>
    public static TimedRegion Start() =>
        new(Stopwatch.GetTimestamp(), GC.GetTotalAllocatedBytes(precise: true), GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2), 0);

    /// <summary>Ends the region: what happened since <see cref="Start"/>.</summary>
    public TimedRegion Stop()
    {
        double seconds = Stopwatch.GetElapsedTime(Timestamp).TotalSeconds;
        return new(Timestamp, GC.GetTotalAllocatedBytes(precise: true) - AllocatedBytes,
            GC.CollectionCount(0) - Gen0, GC.CollectionCount(1) - Gen1, GC.CollectionCount(2) - Gen2, seconds);
    }
}
