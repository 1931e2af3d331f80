using System.Globalization;
using jemalloc.Cli.Caching;
using ScottPlot;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The chart of <c>jembench cache --plot FILE</c>: per side, its throughput on YCSB B (or the first workload that
/// ran) at the goals' thread count, on the left axis, and its longest GC pause over all runs, on a logarithmic
/// millisecond scale on the right axis (the sides differ by orders of magnitude); SVG or PNG by the file's extension.
/// </summary>
public static class CacheChart
{
    private const int Width = 1000;
    private const int Height = 540;

    /// <summary>Writes the chart of <paramref name="results"/> to <paramref name="path"/>.</summary>
    /// <exception cref="CommandLineException">The path is not writable (see <see cref="ChartFile.CheckPath"/>).</exception>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="UnauthorizedAccessException">The file cannot be written.</exception>
    public static void Write(IReadOnlyList<CacheSideResult> results, CacheSettings settings, string path)
    {
        ArgumentNullException.ThrowIfNull(results);
        ArgumentNullException.ThrowIfNull(settings);
        ChartFile.CheckPath(path, "cache");
        int threads = CacheReport.GoalThreads(settings);
        CacheWorkload workload = settings.Workloads.Contains(CacheWorkload.YcsbB) ? CacheWorkload.YcsbB : settings.Workloads[0];
        using var plot = new Plot();
        Color rateColor = Colors.SteelBlue;
        Color pauseColor = Colors.OrangeRed;
        double[] pauses = [.. results.Select(CacheCommand.LongestPause).Where(p => p > 0)];
        double floor = pauses.Length == 0 ? -2 : Math.Floor(Math.Log10(pauses.Min())) - 1;
        double ceiling = pauses.Length == 0 ? 1 : Math.Ceiling(Math.Log10(pauses.Max())) + 0.3;
        double highest = 0;
        var rates = new List<Bar>();
        var pauseBars = new List<Bar>();
        var ticks = new List<Tick>();
        for (int i = 0; i < results.Count; i++)
        {
            CacheSideResult r = results[i];
            double rate = (CacheReport.RunOf(r, workload, threads)?.OperationsPerSecond ?? 0) / 1e6;
            highest = Math.Max(highest, rate);
            rates.Add(new Bar { Position = i * 3, ValueBase = 0, Value = rate, FillColor = rateColor, Label = string.Create(CultureInfo.InvariantCulture, $"{rate:0.00} M/s") });
            double pause = CacheCommand.LongestPause(r);
            pauseBars.Add(new Bar
            {
                Position = (i * 3) + 1,
                ValueBase = 0,
                Value = pause > 0 ? Math.Max(0, Math.Log10(pause) - floor) : 0,
                FillColor = pauseColor,
                Label = pause < 0 ? "n/a" : FormatMs(pause),
            });
            ticks.Add(new Tick((i * 3) + 0.5, CacheSides.Name(r.Side)));
        }

        ScottPlot.Plottables.BarPlot rateBars = plot.Add.Bars(rates);
        rateBars.ValueLabelStyle.FontSize = 12;
        ScottPlot.Plottables.BarPlot pauseBarPlot = plot.Add.Bars(pauseBars);
        pauseBarPlot.ValueLabelStyle.FontSize = 12;
        pauseBarPlot.Axes.YAxis = plot.Axes.Right;
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual([.. ticks]);
        plot.Axes.Bottom.MajorTickStyle.Length = 0;
        var decades = new List<Tick>();
        for (double d = floor; d <= ceiling; d++)
        {
            decades.Add(new Tick(d - floor, FormatMs(Math.Pow(10, d))));
        }

        plot.Axes.Right.TickGenerator = new ScottPlot.TickGenerators.NumericManual([.. decades]);
        plot.Axes.SetLimitsX(-0.75, (results.Count * 3) - 1.25);
        plot.Axes.SetLimitsY(0, highest <= 0 ? 1 : highest * 1.2, plot.Axes.Left);
        plot.Axes.SetLimitsY(0, (ceiling - floor) * 1.05, plot.Axes.Right);
        plot.Axes.Left.Label.Text = string.Create(CultureInfo.InvariantCulture, $"{CacheWorkloads.Name(workload)}, million operations/s ({threads} threads)");
        plot.Axes.Right.Label.Text = "longest GC pause, all runs (log scale)";
        plot.Title(string.Create(CultureInfo.InvariantCulture, $"jembench cache: {settings.Entries:N0} keys, caches sized for {settings.CachePercent}%"));
        plot.Legend.IsVisible = true;
        plot.Legend.Alignment = Alignment.UpperRight;
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "throughput", FillColor = rateColor });
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "longest GC pause", FillColor = pauseColor });
        ChartFile.Save(plot, path, Width, Height);
    }

    private static string FormatMs(double ms) => ms switch
    {
        >= 100 => string.Create(CultureInfo.InvariantCulture, $"{ms:N0} ms"),
        >= 1 => string.Create(CultureInfo.InvariantCulture, $"{ms:0.#} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ms:0.###} ms"),
    };
}
