namespace jemalloc.Cli.Columnar;

/// <summary>What one side of <c>jembench columnar</c> measured, from the start of the load to the end of the free.</summary>
/// <param name="Side">The layout.</param>
/// <param name="Columns">The number of columns.</param>
/// <param name="Rows">Rows of every column.</param>
/// <param name="LoadSeconds">Wall time to read the file into the columns (for <see cref="ColumnarSide.Decode"/>: to decode and sum it).</param>
/// <param name="SumSeconds">Wall time to sum down every column and across the rows (0 for <see cref="ColumnarSide.Decode"/>, which sums while it decodes).</param>
/// <param name="FreeSeconds">Wall time to free the columns (managed arrays: dropping them; the GC takes the memory back later).</param>
/// <param name="UserSeconds">CPU time in user mode of the whole process (every thread) over the three phases.</param>
/// <param name="SystemSeconds">CPU time in the kernel of the whole process over the three phases.</param>
/// <param name="MinorFaults">Page faults served without I/O over the three phases, or -1 where unknown.</param>
/// <param name="MajorFaults">Page faults that needed I/O over the three phases, or -1 where unknown.</param>
/// <param name="VoluntarySwitches">Context switches the process gave up the CPU for (waits), or -1 where unknown.</param>
/// <param name="InvoluntarySwitches">Context switches the kernel forced (time slice over), or -1 where unknown.</param>
/// <param name="PeakRssBytes">Peak resident set of the process (VmHWM), or -1 if unknown.</param>
/// <param name="Gen0">Generation-0 collections over the three phases.</param>
/// <param name="Gen1">Generation-1 collections over the three phases.</param>
/// <param name="Gen2">Generation-2 collections over the three phases.</param>
/// <param name="ColumnSums">The sum of every column, in column order.</param>
/// <param name="RowCheck">The row sums' check value (<see cref="ColumnarData.RowCheckOf"/>).</param>
public sealed record ColumnarResult(
    ColumnarSide Side,
    int Columns,
    long Rows,
    double LoadSeconds,
    double SumSeconds,
    double FreeSeconds,
    double UserSeconds,
    double SystemSeconds,
    long MinorFaults,
    long MajorFaults,
    long VoluntarySwitches,
    long InvoluntarySwitches,
    long PeakRssBytes,
    int Gen0,
    int Gen1,
    int Gen2,
    double[] ColumnSums,
    ulong RowCheck)
{
    /// <summary>Wall time of the load and the sums together.</summary>
    public double LoadAndSumSeconds => LoadSeconds + SumSeconds;

    /// <summary>Wall time of the three phases.</summary>
    public double WallSeconds => LoadSeconds + SumSeconds + FreeSeconds;

    /// <summary>Minor and major page faults together, or -1 where unknown.</summary>
    public long PageFaults => MinorFaults < 0 ? -1 : MinorFaults + MajorFaults;
}
