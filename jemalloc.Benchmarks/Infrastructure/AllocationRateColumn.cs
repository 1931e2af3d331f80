using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using jemalloc.Benchmarks.Suites;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The multi-thread <c>alloc</c> suite's throughput: allocations (each read back and freed) per
/// second over all its threads, so rows with different thread counts compare directly.
/// </summary>
public sealed class AllocationRateColumn : IColumn
{
    private AllocationRateColumn()
    {
    }

    /// <summary>The one instance added to every configuration.</summary>
    public static AllocationRateColumn Instance { get; } = new();

    /// <inheritdoc/>
    public string Id => "JemAllocsPerSecond";

    /// <inheritdoc/>
    public string ColumnName => "M allocs/s";

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Statistics;

    /// <inheritdoc/>
    public int PriorityInCategory => 102;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend => $"Millions of allocations per second over all threads, each block written, read back and freed: threads x {AllocThreadsBenchmarks.RoundsPerOperation} rounds x allocations per round / Mean";

    /// <summary>The allocations one operation of <paramref name="benchmarkCase"/> makes over all its threads, or null when it is not a multi-thread alloc row.</summary>
    public static long? AllocationsOf(BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        if (benchmarkCase.Descriptor.Type != typeof(AllocThreadsBenchmarks) ||
            benchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name == nameof(AllocThreadsBenchmarks.Parameter))?.Value is not long count ||
            benchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name == nameof(AllocThreadsBenchmarks.Threads))?.Value is not int threads)
        {
            return null;
        }

        return threads * AllocThreadsBenchmarks.RoundsPerOperation * count;
    }

    /// <summary>The column's value for <paramref name="benchmarkCase"/> (millions per second), or null.</summary>
    public static double? ValueOf(Summary summary, BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(summary);
        if (AllocationsOf(benchmarkCase) is not long allocations || summary[benchmarkCase]?.ResultStatistics?.Mean is not double nanoseconds || nanoseconds <= 0)
        {
            return null;
        }

        // allocations / (ns * 1e-9 s) / 1e6 = allocations * 1e3 / ns.
        return allocations * 1e3 / nanoseconds;
    }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) =>
        ValueOf(summary, benchmarkCase) is double value ? value.ToString("0.00", CultureInfo.InvariantCulture) : "-";

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary)
    {
        ArgumentNullException.ThrowIfNull(summary);
        return summary.BenchmarksCases.Any(c => AllocationsOf(c) is not null);
    }

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
