using System.Globalization;
using jemalloc.Cli.Columnar;
using ScottPlot;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The chart of <c>jembench columnar --plot FILE</c>: per side, a bar of its wall time split into
/// load, sum and free, labelled under the side with its page faults and gen-2 collections (what the
/// layouts differ by), written as SVG or PNG by the file's extension.
/// </summary>
public static class ColumnarChart
{
    private const int Width = 900;
    private const int Height = 520;

    /// <summary>Writes the chart of <paramref name="results"/> to <paramref name="path"/> (SVG or PNG by its extension).</summary>
    /// <exception cref="CommandLineException">The path is not writable (see <see cref="ChartFile.CheckPath"/>).</exception>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="UnauthorizedAccessException">The file cannot be written.</exception>
    public static void Write(IReadOnlyList<ColumnarResult> results, string path)
    {
        ArgumentNullException.ThrowIfNull(results);
        ChartFile.CheckPath(path, "columnar");
        using var plot = new Plot();
        Color loadColor = Colors.SteelBlue;
        Color sumColor = Colors.SeaGreen;
        Color freeColor = Colors.OrangeRed;
        var bars = new List<Bar>();
        var ticks = new List<Tick>();
        double highest = 0;
        for (int i = 0; i < results.Count; i++)
        {
            ColumnarResult r = results[i];
            bars.Add(new Bar { Position = i, ValueBase = 0, Value = r.LoadSeconds, FillColor = loadColor });
            bars.Add(new Bar { Position = i, ValueBase = r.LoadSeconds, Value = r.LoadSeconds + r.SumSeconds, FillColor = sumColor });
            bars.Add(new Bar
            {
                Position = i,
                ValueBase = r.LoadSeconds + r.SumSeconds,
                Value = r.WallSeconds,
                FillColor = freeColor,
                Label = string.Create(CultureInfo.InvariantCulture, $"{r.WallSeconds:0.00} s"),
            });
            highest = Math.Max(highest, r.WallSeconds);
            string faults = r.PageFaults < 0 ? "faults n/a" : string.Create(CultureInfo.InvariantCulture, $"{r.PageFaults:N0} faults");
            ticks.Add(new Tick(i, string.Create(CultureInfo.InvariantCulture, $"{ColumnarCommand.Name(r.Side)}\n{faults}, gen2 {r.Gen2}")));
        }

        ScottPlot.Plottables.BarPlot barPlot = plot.Add.Bars(bars);
        barPlot.ValueLabelStyle.FontSize = 13;
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual([.. ticks]);
        plot.Axes.Bottom.MajorTickStyle.Length = 0;
        plot.Axes.SetLimits(-0.6, results.Count - 0.4, 0, highest <= 0 ? 1 : highest * 1.2);
        plot.YLabel("seconds (wall)");
        ColumnarResult? first = results.Count > 0 ? results[0] : null;
        plot.Title(first is null
            ? "jembench columnar"
            : string.Create(CultureInfo.InvariantCulture, $"jembench columnar: {first.Columns} columns x {first.Rows:N0} rows"));
        plot.Legend.IsVisible = true;
        plot.Legend.Alignment = Alignment.UpperRight;
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "load (Parquet to columns)", FillColor = loadColor });
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "sum (columns and rows)", FillColor = sumColor });
        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "free", FillColor = freeColor });
        ChartFile.Save(plot, path, Width, Height);
    }
}
