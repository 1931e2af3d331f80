using System.Globalization;
using jemalloc.Benchmarks.Records;
using ScottPlot;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The chart of <c>jembench records --plot FILE</c>: per side, the p99 request latency and the
/// longest GC pause, as bars on a logarithmic millisecond scale (the sides differ by orders of
/// magnitude), written as SVG or PNG by the file's extension.
/// </summary>
public static class RecordsChart
{
    private const int Width = 900;
    private const int Height = 520;

    /// <summary>Writes the chart of <paramref name="results"/> to <paramref name="path"/> (SVG or PNG by its extension).</summary>
    /// <exception cref="CommandLineException">The path is not writable (see <see cref="ChartFile.CheckPath"/>).</exception>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="UnauthorizedAccessException">The file cannot be written.</exception>
    public static void Write(IReadOnlyList<RecordsResult> results, string path)
    {
        ArgumentNullException.ThrowIfNull(results);
        ChartFile.CheckPath(path, "records");
        using var plot = new Plot();
        Color latencyColor = Colors.SteelBlue;
        Color pauseColor = Colors.OrangeRed;
        // Bars of log10(ms), shifted to rise from 0 at one decade below the smallest value (ScottPlot puts
        // the label of a negative bar inside it), and labelled with the value itself.
        double[] all = [.. results.SelectMany(r => new[] { r.P99Us / 1000, r.MaxPauseMs }).Where(v => v > 0)];
        double floor = all.Length == 0 ? -2 : Math.Floor(Math.Log10(all.Min())) - 1;
        double ceiling = all.Length == 0 ? 1 : Math.Ceiling(Math.Log10(all.Max())) + 0.3;
        var bars = new List<Bar>();
        var ticks = new List<Tick>();
        for (int i = 0; i < results.Count; i++)
        {
            RecordsResult r = results[i];
            bars.Add(BarOf((i * 3) + 0, r.P99Us / 1000, floor, latencyColor));
            bars.Add(BarOf((i * 3) + 1, r.MaxPauseMs, floor, pauseColor));
            ticks.Add(new Tick((i * 3) + 0.5, RecordsCommand.Name(r.Side)));
        }

        ScottPlot.Plottables.BarPlot barPlot = plot.Add.Bars(bars);
        barPlot.ValueLabelStyle.FontSize = 13;
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual([.. ticks]);
        plot.Axes.Bottom.MajorTickStyle.Length = 0;
        var decades = new List<Tick>();
        for (double d = floor; d <= ceiling; d++)
        {
            decades.Add(new Tick(d - floor, FormatMs(Math.Pow(10, d))));
        }

        plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericManual([.. decades]);
        plot.Axes.SetLimits(-0.75, (results.Count * 3) - 1.25, 0, ceiling - floor);
        plot.YLabel("milliseconds (log scale)");
        RecordsResult? first = results.Count > 0 ? results[0] : null;
        plot.Title(first is null
            ? "jembench records"
            : string.Create(CultureInfo.InvariantCulture, $"jembench records: {first.Records:N0} records, {first.Requests:N0} requests"));
        plot.Legend.IsVisible = true;
        plot.Legend.Alignment = Alignment.UpperRight;
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "p99 request latency", FillColor = latencyColor });
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "longest GC pause", FillColor = pauseColor });
        ChartFile.Save(plot, path, Width, Height);
    }

    private static Bar BarOf(double position, double ms, double floor, Color color) => new()
    {
        Position = position,
        ValueBase = 0,
        Value = ms > 0 ? Math.Max(0, Math.Log10(ms) - floor) : 0,
        FillColor = color,
        Label = FormatMs(ms),
    };

    private static string FormatMs(double ms) => ms switch
    {
        >= 100 => string.Create(CultureInfo.InvariantCulture, $"{ms:N0} ms"),
        >= 1 => string.Create(CultureInfo.InvariantCulture, $"{ms:0.#} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ms:0.###} ms"),
    };
}
