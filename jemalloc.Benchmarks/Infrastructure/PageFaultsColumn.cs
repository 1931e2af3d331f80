using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Page faults (minor + major) per operation of the actual run: the faults
/// <see cref="ResourceDiagnoser"/> counted, divided by the operations of the actual workload
/// iterations only.
/// </summary>
public sealed class PageFaultsColumn : IColumn
{
    /// <summary>The one instance added to every configuration.</summary>
    public static PageFaultsColumn Instance { get; } = new();

    private PageFaultsColumn()
    {
    }

    /// <inheritdoc/>
    public string Id => "JemPageFaults";

    /// <inheritdoc/>
    public string ColumnName => "Faults/op";

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Metric;

    /// <inheritdoc/>
    public int PriorityInCategory => 4;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend => "Page faults (minor + major) per operation of the measured run (/proc/<pid>/stat)";

    /// <summary>Faults per operation, or null where they were not measured.</summary>
    public static double? FaultsPerOperation(Summary summary, BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(summary);
        if (!ResourceDiagnoser.Instance.TryGetPageFaults(benchmarkCase, out long faults) || summary[benchmarkCase] is not BenchmarkReport report)
        {
            return null;
        }

        long operations = report.AllMeasurements
            .Where(m => m.IterationMode == IterationMode.Workload && m.IterationStage == IterationStage.Actual)
            .Sum(m => m.Operations);
        return operations > 0 ? faults / (double)operations : null;
    }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) =>
        FaultsPerOperation(summary, benchmarkCase) is double value ? value.ToString("N0", CultureInfo.InvariantCulture) : "-";

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary) => true;

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
