using System.Globalization;
using jemalloc.Benchmarks.Records;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>
/// <c>jembench records</c>: runs each side of the record-table workload (by default each in a
/// process of its own, so each reports its own peak RSS), prints the table and the goals' ratios,
/// and fails with exit code 2 if the sides' results differ.
/// </summary>
public static class RecordsCommand
{
    private const string ResultPrefix = "records-result: ";

    /// <summary>Runs the verb.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side.</exception>
    public static int Run(RecordsOptions options, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        RecordsSide[] sides = ParseSides(CommaList.Split(options.Sides));
        if (options.Records < RecordsHarness.ScanWindow)
        {
            throw new CommandLineException($"records: --records must be at least {RecordsHarness.ScanWindow} (the scan window); got {options.Records}.");
        }

        if (options.Records > int.MaxValue && sides.Any(s => s != RecordsSide.Native))
        {
            throw new CommandLineException($"records: the managed sides hold at most {int.MaxValue} records (one .NET array); run --side native for more.");
        }

        if (options.Requests < 1)
        {
            throw new CommandLineException($"records: --requests must be at least 1; got {options.Requests}.");
        }

        if (options.FullCollections < 0 || options.FullCollections >= options.Requests)
        {
            throw new CommandLineException($"records: --full-gcs must be from 0 to fewer than --requests; got {options.FullCollections}.");
        }

        if (options.Plot is not null && !options.Child)
        {
            // Before the sides run for minutes, not after.
            ChartFile.CheckPath(options.Plot, "records");
        }

        RecordsSide? corrupt = options.Corrupt is null ? null : ParseSides([options.Corrupt])[0];
        if (options.Child)
        {
            RecordsResult result = RecordsHarness.Run(sides[0], options.Records, options.Requests, options.FullCollections, corrupt == sides[0]);
            SideProcess.WriteResult(output, ResultPrefix, result);
            return Program.ExitSuccess;
        }

        IReadOnlyList<string>? jembench = options.InProcess ? null : SideProcess.JembenchCommand();
        if (!options.InProcess && jembench is null)
        {
            output.WriteLine("records: this process is not jembench, so the sides run in this process (peak RSS is then cumulative).");
        }

        output.WriteLine($"records: {options.Records:N0} records, {options.Requests:N0} requests ({RecordsHarness.LookupsPerRequest} lookups, a {RecordsHarness.ScanWindow:N0}-row scan, {RecordsHarness.RenamesPerRequest} renames each), {options.FullCollections} induced full GCs per side; GC: {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}, concurrent {(AppContext.TryGetSwitch("System.GC.Concurrent", out bool concurrent) ? concurrent : "default")}.");
        var results = new List<RecordsResult>();
        using var load = new HostLoad();
        foreach (RecordsSide side in sides)
        {
            RecordsResult? result = jembench is null
                ? RecordsHarness.Run(side, options.Records, options.Requests, options.FullCollections, corrupt == side)
                : RunChild(jembench, side, options, error);
            if (result is null)
            {
                error.WriteLine($"records: the {Name(side)} side failed.");
                return Program.ExitBenchmarkFailed;
            }

            results.Add(result);
            output.WriteLine($"records: {Name(side)} done: build {result.BuildSeconds:F1} s, p99 {result.P99Us:F0} us, max GC pause {result.MaxPauseMs:F1} ms.");
        }

        PrintTable(results, output);
        load.Report(output, "records");
        if (results.Select(r => r.Checksum).Distinct().Count() > 1)
        {
            error.WriteLine("records: WRONG RESULT: the sides' request results differ: " +
                string.Join(", ", results.Select(r => $"{Name(r.Side)} {r.Checksum:X16}")));
            return Program.ExitBenchmarkFailed;
        }

        if (options.Plot is not null
            && ChartFile.Write("records", options.Plot, file => RecordsChart.Write(results, file), output, error) != Program.ExitSuccess)
        {
            return Program.ExitBadArguments;
        }

        output.WriteLine(results.Count > 1
            ? $"records: results checked: every side gave the same results (checksum {results[0].Checksum:X16})."
            : "records: lookups checked against the source data; run two or more sides to check scans and renames across sides.");
        return Program.ExitSuccess;
    }

    /// <summary>The lowercase name of a side, as --side takes it.</summary>
    public static string Name(RecordsSide side) => side.ToString().ToLowerInvariant();

    private static RecordsSide[] ParseSides(string[] given)
    {
        if (given.Length == 0)
        {
            return Enum.GetValues<RecordsSide>();
        }

        var sides = new List<RecordsSide>();
        foreach (string name in given)
        {
            RecordsSide side = name switch
            {
                "class" => RecordsSide.Class,
                "struct" => RecordsSide.Struct,
                "native" => RecordsSide.Native,
                _ => throw new CommandLineException($"records: unknown side '{name}'; the sides are class, struct and native."),
            };
            if (!sides.Contains(side))
            {
                sides.Add(side);
            }
        }

        return [.. sides];
    }

    private static RecordsResult? RunChild(IReadOnlyList<string> jembench, RecordsSide side, RecordsOptions options, TextWriter error)
    {
        var arguments = new List<string>
        {
            "records", "--child", "--side", Name(side),
            "--records", options.Records.ToString(CultureInfo.InvariantCulture),
            "--requests", options.Requests.ToString(CultureInfo.InvariantCulture),
            "--full-gcs", options.FullCollections.ToString(CultureInfo.InvariantCulture),
        };
        if (options.Corrupt is not null)
        {
            arguments.Add("--corrupt");
            arguments.Add(options.Corrupt);
        }

        return SideProcess.Run<RecordsResult>(jembench, arguments, ResultPrefix, $"records: the {Name(side)}", error);
    }

    private static void PrintTable(List<RecordsResult> results, TextWriter output)
    {
        const double MiB = 1024.0 * 1024.0;
        output.WriteLine();
        output.WriteLine("| Side | Build (s) | GC pause total (ms) | GC pause max (ms) | GCs 0/1/2 | p50 (us) | p99 (us) | p99.9 (us) | max (us) | Peak RSS (MiB) | Peak managed heap (MiB) | Native (MiB) | Lookups/s | Scan rows/s |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (RecordsResult r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {Name(r.Side)} | {r.BuildSeconds:F1} | {r.TotalPauseMs:F1} | {r.MaxPauseMs:F1} | {r.Gen0}/{r.Gen1}/{r.Gen2} | {r.P50Us:F0} | {r.P99Us:F0} | {r.P999Us:F0} | {r.MaxUs:F0} | {(r.PeakRssBytes < 0 ? "n/a" : (r.PeakRssBytes / MiB).ToString("F0", CultureInfo.InvariantCulture))} | {r.PeakHeapBytes / MiB:F0} | {r.NativeBytes / MiB:F0} | {r.LookupsPerSecond / 1e6:F2} M | {r.ScanRowsPerSecond / 1e6:F0} M |"));
        }

        RecordsResult? managed = results.Find(r => r.Side == RecordsSide.Class);
        RecordsResult? best = results.Find(r => r.Side == RecordsSide.Struct);
        RecordsResult? native = results.Find(r => r.Side == RecordsSide.Native);
        if (native is null || (managed is null && best is null))
        {
            return;
        }

        output.WriteLine();
        output.WriteLine("Goals (native against the others, this run):");
        if (managed is not null)
        {
            Goal(output, "max GC pause vs class", native.MaxPauseMs, managed.MaxPauseMs, 1.0 / 20, lowerIsBetter: true);
            Goal(output, "total GC pause vs class", native.TotalPauseMs, managed.TotalPauseMs, 1.0 / 10, lowerIsBetter: true);
            if (native.PeakRssBytes > 0 && managed.PeakRssBytes > 0)
            {
                Goal(output, "peak RSS vs class", native.PeakRssBytes, managed.PeakRssBytes, 0.6, lowerIsBetter: true);
            }

            Goal(output, "p99 latency vs class", native.P99Us, managed.P99Us, 1.0 / 5, lowerIsBetter: true);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  p99.9 latency vs class: {native.P999Us / managed.P999Us:F3}x, max latency vs class: {native.MaxUs / managed.MaxUs:F3}x (no goal: where collections inside requests show)"));
        }

        if (best is not null)
        {
            Goal(output, "lookups/s vs struct", native.LookupsPerSecond, best.LookupsPerSecond, 1.0, lowerIsBetter: false);
            Goal(output, "scan rows/s vs struct", native.ScanRowsPerSecond, best.ScanRowsPerSecond, 1.0, lowerIsBetter: false);
            Goal(output, "build time vs struct", native.BuildSeconds, best.BuildSeconds, 1.0, lowerIsBetter: true);
        }

        PrintAgainstBestManaged(native, [.. results.Where(r => r.Side != RecordsSide.Native)], output);
    }

    // Each native figure over the best managed side's for that figure (the lower of a cost, the higher
    // of a rate), whichever side that is: a ratio below 1 is better for costs, above 1 for rates.
    private static void PrintAgainstBestManaged(RecordsResult native, RecordsResult[] managed, TextWriter output)
    {
        (string Name, Func<RecordsResult, double> Figure, bool LowerIsBetter)[] figures =
        [
            ("build", r => r.BuildSeconds, true),
            ("GC pause total", r => r.TotalPauseMs, true),
            ("GC pause max", r => r.MaxPauseMs, true),
            ("p50", r => r.P50Us, true),
            ("p99", r => r.P99Us, true),
            ("p99.9", r => r.P999Us, true),
            ("max", r => r.MaxUs, true),
            ("peak RSS", r => r.PeakRssBytes, true),
            ("lookups/s", r => r.LookupsPerSecond, false),
            ("scan rows/s", r => r.ScanRowsPerSecond, false),
        ];
        var parts = new List<string>();
        foreach ((string name, Func<RecordsResult, double> figure, bool lowerIsBetter) in figures)
        {
            RecordsResult[] known = [.. managed.Where(r => figure(r) > 0)];
            if (known.Length == 0 || figure(native) < 0)
            {
                continue;
            }

            RecordsResult best = lowerIsBetter ? known.MinBy(figure)! : known.MaxBy(figure)!;
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"{name} {figure(native) / figure(best):F3}x ({Name(best.Side)})"));
        }

        output.WriteLine($"  native / best managed side, per figure (costs: lower is better; rates: higher): {string.Join(", ", parts)}");
    }

    private static void Goal(TextWriter output, string what, double native, double other, double target, bool lowerIsBetter)
    {
        double ratio = other == 0 ? double.PositiveInfinity : native / other;
        bool met = lowerIsBetter ? ratio <= target : ratio >= target;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {what}: {ratio:F3}x (goal {(lowerIsBetter ? "<=" : ">=")} {target:F3}x): {(met ? "met" : "NOT met")}"));
    }
}
