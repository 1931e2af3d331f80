namespace jemalloc.Cli.Strings;

/// <summary>What one side of <c>jembench strings</c> measured and computed, from the start of the load to the end of the free.</summary>
/// <param name="Side">The layout.</param>
/// <param name="Rows">The rows loaded.</param>
/// <param name="LoadSeconds">Wall time to read all five columns.</param>
/// <param name="StringLoadSeconds">The part of the load that read the three string columns.</param>
/// <param name="FilterSeconds">Wall time to find the rows whose note starts with the prefix.</param>
/// <param name="GroupSeconds">Wall time to group those rows by category (count and amount) and to add up the ids.</param>
/// <param name="FreeSeconds">Wall time to free the columns (managed: dropping them; the collector takes the memory back later).</param>
/// <param name="UserSeconds">CPU time in user mode of the whole process (every thread) over the four phases.</param>
/// <param name="SystemSeconds">CPU time in the kernel of the whole process over the four phases.</param>
/// <param name="MinorFaults">Page faults served without I/O over the four phases, or -1 where unknown.</param>
/// <param name="MajorFaults">Page faults that needed I/O over the four phases, or -1 where unknown.</param>
/// <param name="PeakRssBytes">Peak resident set of the process (VmHWM), or -1 if unknown.</param>
/// <param name="Gen0">Generation-0 collections over the four phases.</param>
/// <param name="Gen1">Generation-1 collections over the four phases.</param>
/// <param name="Gen2">Generation-2 collections over the four phases.</param>
/// <param name="TotalGcPauseMs">The collector's pauses added up (<see cref="GC.GetTotalPauseDuration"/>).</param>
/// <param name="LongestGcPauseMs">The longest single pause, from the runtime's GC events, or -1 if they did not arrive.</param>
/// <param name="FilteredRows">The rows whose note starts with the prefix.</param>
/// <param name="IdSum">The sum of the <c>id</c> column.</param>
/// <param name="Groups">The filtered rows grouped by category, in <see cref="StringsGroup.Sorted"/>'s order.</param>
public sealed record StringsResult(
    StringsSide Side,
    long Rows,
    double LoadSeconds,
    double StringLoadSeconds,
    double FilterSeconds,
    double GroupSeconds,
    double FreeSeconds,
    double UserSeconds,
    double SystemSeconds,
    long MinorFaults,
    long MajorFaults,
    long PeakRssBytes,
    int Gen0,
    int Gen1,
    int Gen2,
    double TotalGcPauseMs,
    double LongestGcPauseMs,
    long FilteredRows,
    long IdSum,
    StringsGroup[] Groups)
{
    /// <summary>Wall time of the four phases.</summary>
    public double WallSeconds => LoadSeconds + FilterSeconds + GroupSeconds + FreeSeconds;
}
