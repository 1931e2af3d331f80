namespace jemalloc.Cli.Columnar;

/// <summary>What a <see cref="PhaseMeter"/> counted over the phases it ran.</summary>
/// <param name="Usage">The process's CPU times, page faults and context switches.</param>
/// <param name="Gen0">Generation-0 collections.</param>
/// <param name="Gen1">Generation-1 collections.</param>
/// <param name="Gen2">Generation-2 collections.</param>
/// <param name="TotalGcPauseMs">The collector's pauses added up, as the runtime counts them (<see cref="GC.GetTotalPauseDuration"/>, timed inside the collection: less of stopping and restarting the threads than the longest pause counts), or -1 when pauses were not tracked.</param>
/// <param name="LongestGcPauseMs">The longest single pause, from the threads' suspension to their restart (<see cref="GcPauseListener"/>), or -1 when pauses were not tracked or their events did not arrive.</param>
public readonly record struct PhaseTotals(ProcessUsage Usage, int Gen0, int Gen1, int Gen2, double TotalGcPauseMs, double LongestGcPauseMs);
