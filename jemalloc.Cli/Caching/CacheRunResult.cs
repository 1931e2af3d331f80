namespace jemalloc.Cli.Caching;

/// <summary>One timed run of one workload at one thread count on one side of <c>jembench cache</c>.</summary>
/// <param name="Workload">The workload.</param>
/// <param name="Threads">The threads that ran it.</param>
/// <param name="Operations">Operations done (a read's write after a miss is part of its operation).</param>
/// <param name="Seconds">Wall time.</param>
/// <param name="Reads">Reads among the operations.</param>
/// <param name="Hits">Reads that found their key.</param>
/// <param name="P50Us">Median operation latency in microseconds (one operation in <see cref="CacheHarness.SampleEvery"/> timed).</param>
/// <param name="P99Us">99th percentile, microseconds.</param>
/// <param name="P999Us">99.9th percentile, microseconds.</param>
/// <param name="MaxUs">The longest timed operation, microseconds.</param>
/// <param name="Gen0">Generation-0 collections during the run.</param>
/// <param name="Gen1">Generation-1 collections.</param>
/// <param name="Gen2">Generation-2 collections.</param>
/// <param name="TotalPauseMs">The collector's pauses added up.</param>
/// <param name="LongestPauseMs">The longest single pause, or -1 if its events did not arrive.</param>
/// <param name="AllocatedBytesPerOperation">Managed bytes allocated per operation (the whole process).</param>
/// <param name="HotHitRatioBefore">The scan only: the hot set's hit ratio before the scan, otherwise -1.</param>
/// <param name="HotHitRatioAfter">The scan only: the hot set's hit ratio after the scan, otherwise -1.</param>
/// <param name="EntriesAfterExpiry">The expiry phase only: entries once every lifetime has passed and expired entries were trimmed, otherwise -1.</param>
/// <param name="EntriesBeforeExpiry">The expiry phase only: entries at its end, otherwise -1.</param>
public sealed record CacheRunResult(
    CacheWorkload Workload,
    int Threads,
    long Operations,
    double Seconds,
    long Reads,
    long Hits,
    double P50Us,
    double P99Us,
    double P999Us,
    double MaxUs,
    int Gen0,
    int Gen1,
    int Gen2,
    double TotalPauseMs,
    double LongestPauseMs,
    double AllocatedBytesPerOperation,
    double HotHitRatioBefore,
    double HotHitRatioAfter,
    long EntriesAfterExpiry,
    long EntriesBeforeExpiry)
{
    /// <summary>Operations per second.</summary>
    public double OperationsPerSecond => Seconds > 0 ? Operations / Seconds : 0;

    /// <summary>The share of reads that hit.</summary>
    public double HitRatio => Reads > 0 ? (double)Hits / Reads : 0;
}
