namespace jemalloc.Benchmarks.Records;

/// <summary>What one side of <c>jembench records</c> measured.</summary>
/// <param name="Side">The layout.</param>
/// <param name="Records">The number of records.</param>
/// <param name="Requests">The number of requests in the loop.</param>
/// <param name="BuildSeconds">Time to build the table.</param>
/// <param name="TotalPauseMs">GC pause time during the loop (<c>GC.GetTotalPauseDuration</c>), induced collections included.</param>
/// <param name="MaxPauseMs">The longest single GC pause seen during the loop.</param>
/// <param name="Gen0">Generation-0 collections during the loop.</param>
/// <param name="Gen1">Generation-1 collections during the loop.</param>
/// <param name="Gen2">Generation-2 collections during the loop, induced ones included.</param>
/// <param name="P50Us">Median request latency in microseconds.</param>
/// <param name="P99Us">99th-percentile request latency in microseconds.</param>
/// <param name="P999Us">99.9th-percentile request latency in microseconds (where the collections inside requests show when fewer than 1% of requests have one).</param>
/// <param name="MaxUs">Longest request in microseconds.</param>
/// <param name="PeakRssBytes">Peak resident set of the process (VmHWM), or -1 if unknown.</param>
/// <param name="PeakHeapBytes">Largest managed heap size seen (after build and at each GC of the loop).</param>
/// <param name="NativeBytes">Bytes of live allocations in the allocation ledger after the loop.</param>
/// <param name="LookupsPerSecond">Id lookups per second of lookup time.</param>
/// <param name="ScanRowsPerSecond">Rows scanned per second of scan time.</param>
/// <param name="Checksum">A hash of every request's results: equal on every side.</param>
public sealed record RecordsResult(
    RecordsSide Side,
    long Records,
    int Requests,
    double BuildSeconds,
    double TotalPauseMs,
    double MaxPauseMs,
    int Gen0,
    int Gen1,
    int Gen2,
    double P50Us,
    double P99Us,
    double P999Us,
    double MaxUs,
    long PeakRssBytes,
    long PeakHeapBytes,
    long NativeBytes,
    double LookupsPerSecond,
    double ScanRowsPerSecond,
    ulong Checksum);
