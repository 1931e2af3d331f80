using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>One figure of the fragmentation measured for a <c>malloc --fragment</c> row (see <see cref="FragmentationColumns"/>).</summary>
public sealed class FragmentationColumn : IColumn
{
    private const double Mebibyte = 1024 * 1024;
    private readonly Func<FragmentationSample, double> _value;
    private readonly bool _ratio;

    internal FragmentationColumn(string id, string name, string legend, int priority, bool ratio, Func<FragmentationSample, double> value)
    {
        Id = id;
        ColumnName = name;
        Legend = legend;
        PriorityInCategory = priority;
        _ratio = ratio;
        _value = value;
    }

    /// <inheritdoc/>
    public string Id { get; }

    /// <inheritdoc/>
    public string ColumnName { get; }

    /// <inheritdoc/>
    public string Legend { get; }

    /// <inheritdoc/>
    public int PriorityInCategory { get; }

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Custom;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <summary>The figure for <paramref name="benchmarkCase"/>, or null when it was not measured.</summary>
    public double? ValueOf(BenchmarkCase benchmarkCase) =>
        FragmentationColumns.Find(benchmarkCase) is FragmentationSample peak ? _value(peak) : null;

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => ValueOf(benchmarkCase) switch
    {
        null => "-",
        double value when _ratio => value.ToString("0.00", CultureInfo.InvariantCulture),
        double value => (value / Mebibyte).ToString("N1", CultureInfo.InvariantCulture),
    };

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary)
    {
        ArgumentNullException.ThrowIfNull(summary);
        return summary.BenchmarksCases.Any(c => FragmentationColumns.Find(c) is not null);
    }

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
