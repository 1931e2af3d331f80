using System.Globalization;
using System.Runtime.InteropServices;

namespace jemalloc.PerfCompare;

/// <summary>What the comparison prints: what it compares and how, each round's ratios, and the table with its verdicts.</summary>
internal static class Report
{
    private static readonly string[] Columns = ["measurement", "old (median ±)", "new (median ±)", "new/old", "rounds p25-p75", "pairs", "best/best", "verdict"];

    internal static void Header(TextWriter output, CompareOptions options, string oldLibrary, string newLibrary)
    {
        output.WriteLine($"compare-builds: old = {options.OldLabel}");
        output.WriteLine($"                new = {options.NewLabel}");
        output.WriteLine($"  old library: {oldLibrary}");
        output.WriteLine($"  new library: {newLibrary}");
        output.WriteLine(Invariant($"  the same measurement code (jemalloc.PerfCompare) compiled against each library; {options.Processes} worker process(es) per side taking turns by round; tiered JIT with dynamic PGO"));
        output.WriteLine(Invariant($"  {options.Rounds} rounds of ~{options.SampleMilliseconds} ms per measurement and side, old and new back to back (which first alternating), after a warm-up of"));
        output.WriteLine(Invariant($"  {options.WarmupMilliseconds} ms per measurement and process and on until its JIT was done, then one unrecorded round"));
        output.WriteLine(Invariant($"  machine: {Environment.ProcessorCount} logical cores, {RuntimeInformation.OSDescription}, .NET {Environment.Version}"));
        output.WriteLine();
    }

    internal static void RoundHeader(TextWriter output, IReadOnlyList<Measurement> measurements, bool cpuClock)
    {
        output.WriteLine($"new/old per round ({ClockName(cpuClock)}):");
        output.WriteLine("round (processes)  " + string.Concat(measurements.Select(m => m.Name.PadLeft(Math.Max(m.Name.Length, 6) + 2))));
    }

    internal static void Round(TextWriter output, int round, int process, IReadOnlyList<Measurement> measurements, double[] ratios)
    {
        string text = string.Concat(measurements.Select((m, i) => Invariant($"{ratios[i]:F3}").PadLeft(Math.Max(m.Name.Length, 6) + 2)));
        output.WriteLine(Invariant($"{round + 1,5} (#{process})       {text}"));
    }

    /// <summary>Prints the table, the load and the verdict.</summary>
    internal static void Table(TextWriter output, CompareOptions options, IReadOnlyList<RowResult> rows, bool cpuClock, LoadAverage load)
    {
        output.WriteLine();
        output.WriteLine($"times: {ClockName(cpuClock)}");
        output.WriteLine(Invariant($"new/old: the median over the {options.Processes} pairs of worker processes of each pair's median ratio over its rounds (a round runs old and new back to back);"));
        output.WriteLine("rounds p25-p75: the middle half of all rounds' ratios; pairs: the lowest and highest pair; ±: half the interquartile range of a side's");
        output.WriteLine("rounds, relative to its median; best/best: new's fastest round over old's");
        var table = new List<string[]> { Columns };
        foreach (RowResult row in rows)
        {
            Measurement m = row.Measurement;
            table.Add(
            [
                m.Title, Time(m, row.OldMedian, row.OldSpread), Time(m, row.NewMedian, row.NewSpread), Invariant($"{row.Ratio:F3}"),
                Invariant($"{row.RatioLow:F3}-{row.RatioHigh:F3}"), Invariant($"{row.PairLow:F3}-{row.PairHigh:F3}"), Invariant($"{row.BestRatio:F3}"),
                row.Verdict + (row.WithinSpread ? " (1.00 within the spread: noise)" : ""),
            ]);
        }

        int[] widths = [.. Enumerable.Range(0, table[0].Length).Select(c => table.Max(line => line[c].Length))];
        foreach (string[] line in table)
        {
            // Text left-aligned, numbers right-aligned; the last column unpadded.
            output.WriteLine(string.Join("  ", line.Select((cell, c) =>
                c == line.Length - 1 ? cell : c is 3 or 6 ? cell.PadLeft(widths[c]) : cell.PadRight(widths[c]))).TrimEnd());
        }

        output.WriteLine();
        output.WriteLine(load.Describe() is string described
            ? $"load average (1 min): {described}; {Environment.ProcessorCount} logical cores"
            : $"load average: not available here; {Environment.ProcessorCount} logical cores");
        if (load.Max > Environment.ProcessorCount)
        {
            output.WriteLine(Invariant($"WARNING: the load average reached {load.Max:F2}, above the {Environment.ProcessorCount} cores (this run's measuring worker counts for about 1): other work competed with the measurements; compare on a quieter machine."));
        }

        output.WriteLine(Invariant($"tolerance: new/old at most {1 + options.Tolerance:F2} (new at most {options.Tolerance * 100:0.#}% slower); old and new did the same operations, the same number of times."));
        output.WriteLine("Noise: on a shared, noisy machine (2 cores here, other builds running) a ratio whose distance from 1.00 is within the rounds' spread");
        output.WriteLine("(p25-p75 of the per-round ratios takes in 1.00) is noise, not a difference between the builds: re-run before concluding. The control row");
        output.WriteLine("runs no library code on either side; its distance from 1.00 is what the machine alone does.");
        RowResult[] judged = [.. rows.Where(r => !r.Measurement.IsControl)];
        RowResult[] failed = [.. judged.Where(r => !r.Passed)];
        output.WriteLine(failed.Length == 0
            ? Invariant($"result: PASS: {judged.Length} of {judged.Length} measurements within {options.Tolerance * 100:0.#}%")
            : Invariant($"result: FAIL: {string.Join(", ", failed.Select(r => $"{r.Measurement.Name} {r.Ratio:F3}"))} over {1 + options.Tolerance:F2}{(failed.All(r => r.WithinSpread) ? " (each within its rounds' spread: likely noise; re-run)" : "")}"));
    }

    private static string ClockName(bool cpuClock) => cpuClock
        ? "the worker thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time other processes held the core left out)"
        : "wall clock";

    private static string Time(Measurement measurement, double nanoseconds, double spread)
    {
        string time = Invariant($"{measurement.Scale(nanoseconds):F2} {measurement.Unit}");
        if (measurement.BytesPerOperation > 0)
        {
            time += Invariant($" {measurement.GigabytesPerSecond(nanoseconds):F2} GB/s");
        }

        return time + Invariant($" ±{spread * 100:F1}%");
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
