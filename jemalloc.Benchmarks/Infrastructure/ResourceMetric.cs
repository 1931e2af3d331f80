using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>The columns <see cref="ResourceDiagnoser"/> adds to the results.</summary>
internal sealed class ResourceMetric : IMetricDescriptor
{
    public static readonly ResourceMetric JemLiveChange = new(
        "JemLiveDelta", "Jem Allocated Δ", "Change of the bytes allocated by jemalloc (stats.allocated) over the whole measured run", UnitType.Size, "B", 2);

    public static readonly ResourceMetric PeakResident = new(
        "PeakRss", "Peak RSS", "Peak resident memory of the process during the measured run (VmHWM)", UnitType.Size, "B", 3);

    private ResourceMetric(string id, string displayName, string legend, UnitType unitType, string unit, int priority)
    {
        Id = id;
        DisplayName = displayName;
        Legend = legend;
        UnitType = unitType;
        Unit = unit;
        PriorityInCategory = priority;
    }

    public string Id { get; }

    public string DisplayName { get; }

    public string Legend { get; }

    public string NumberFormat => "N0";

    public UnitType UnitType { get; }

    public string Unit { get; }

    public bool TheGreaterTheBetter => false;

    public int PriorityInCategory { get; }

    public bool GetIsAvailable(Metric metric) => true;
}
