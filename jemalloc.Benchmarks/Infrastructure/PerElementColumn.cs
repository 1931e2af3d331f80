using System.Globalization;
using System.Reflection;
using System.Runtime.CompilerServices;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The mean time of a structure row per element it processed, and the bytes per second that makes.
/// Rows of one group can process different numbers of elements (<c>hugearray</c>: a managed array
/// holds at most <see cref="Array.MaxLength"/> elements, a HugeArray the whole count), so their
/// Ratio compares whole operations of unequal work; these columns compare equal units of work.
/// </summary>
public sealed class PerElementColumn : IColumn
{
    private readonly bool _throughput;

    private PerElementColumn(bool throughput) => _throughput = throughput;

    /// <summary>Nanoseconds per element.</summary>
    public static PerElementColumn NanosecondsPerElement { get; } = new(throughput: false);

    /// <summary>Gigabytes (10^9 bytes) of elements processed per second.</summary>
    public static PerElementColumn GigabytesPerSecond { get; } = new(throughput: true);

    /// <inheritdoc/>
    public string Id => _throughput ? "JemGBps" : "JemNsPerElement";

    /// <inheritdoc/>
    public string ColumnName => _throughput ? "GB/s" : "ns/element";

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Statistics;

    /// <inheritdoc/>
    public int PriorityInCategory => _throughput ? 101 : 100;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend => _throughput
        ? "Bytes of elements processed per second (10^9 B/s): elements x element size / Mean"
        : "Mean time per element processed: a managed-array row processes min(count, Array.MaxLength) elements, a native row the whole count";

    /// <summary>The elements one operation of <paramref name="benchmarkCase"/> processes, or null when it is not a structure row.</summary>
    public static long? ElementsOf(BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        if (benchmarkCase.Descriptor.Type.GetCustomAttribute<ElementRowsAttribute>(inherit: true) is null ||
            benchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name == "Parameter")?.Value is not long count)
        {
            return null;
        }

        return benchmarkCase.Descriptor.WorkloadMethod.GetCustomAttribute<ManagedArrayRowAttribute>(inherit: true) is null
            ? count
            : Math.Min(count, Array.MaxLength);
    }

    /// <summary>The column's value for <paramref name="benchmarkCase"/>, or null.</summary>
    public double? ValueOf(Summary summary, BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(summary);
        if (ElementsOf(benchmarkCase) is not long elements || summary[benchmarkCase]?.ResultStatistics?.Mean is not double nanoseconds || nanoseconds <= 0)
        {
            return null;
        }

        if (!_throughput)
        {
            return nanoseconds / elements;
        }

        Type elementType = benchmarkCase.Descriptor.Type.GetGenericArguments().FirstOrDefault() ?? typeof(byte);
        double bytes = elements * (double)(int)typeof(Unsafe).GetMethod(nameof(Unsafe.SizeOf))!.MakeGenericMethod(elementType).Invoke(null, null)!;
        return bytes / nanoseconds;
    }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) =>
        ValueOf(summary, benchmarkCase) is double value ? value.ToString(_throughput ? "0.00" : "0.0000", CultureInfo.InvariantCulture) : "-";

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary)
    {
        ArgumentNullException.ThrowIfNull(summary);
        return summary.BenchmarksCases.Any(c => ElementsOf(c) is not null);
    }

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
