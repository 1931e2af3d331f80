using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using jemalloc.Benchmarks.Suites;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The cores the multi-thread <c>alloc</c> suite ran on, next to its thread count: a row with more
/// threads than cores measures time-sharing, not parallel speed, and says so.
/// </summary>
public sealed class CoresColumn : IColumn
{
    private CoresColumn()
    {
    }

    /// <summary>The one instance added to every configuration.</summary>
    public static CoresColumn Instance { get; } = new();

    /// <inheritdoc/>
    public string Id => "JemCores";

    /// <inheritdoc/>
    public string ColumnName => "Cores";

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Params;

    /// <inheritdoc/>
    public int PriorityInCategory => 100;

    /// <inheritdoc/>
    public bool IsNumeric => false;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend => "Logical cores of this machine (Environment.ProcessorCount); 'fewer than threads' when the row runs more threads than that";

    /// <summary>What the column shows for a row of <paramref name="threads"/> threads on <paramref name="cores"/> cores.</summary>
    public static string Describe(int threads, int cores) =>
        threads > cores
            ? string.Create(CultureInfo.InvariantCulture, $"{cores} (fewer than threads)")
            : cores.ToString(CultureInfo.InvariantCulture);

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        return benchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name == nameof(AllocThreadsBenchmarks.Threads))?.Value is int threads
            ? Describe(threads, Environment.ProcessorCount)
            : "-";
    }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary)
    {
        ArgumentNullException.ThrowIfNull(summary);
        return summary.BenchmarksCases.Any(c => c.Descriptor.Type == typeof(AllocThreadsBenchmarks));
    }

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
