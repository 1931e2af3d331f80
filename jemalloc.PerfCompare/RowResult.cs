namespace jemalloc.PerfCompare;

/// <summary>
/// One measurement's result over the rounds: each side's median time per operation and the spread of
/// its rounds, and the ratio new/old, taken per round (the two sides of a round ran one right after
/// the other, under the same load). Round r ran on the pair of processes r mod the number of pairs;
/// the ratio of the result is the median over the pairs of each pair's median ratio, since a process
/// can be slower than its siblings for the whole of its life (dynamic PGO decides per process what the
/// optimized code inlines: about one process in eight ran a <c>FixedBuffer</c> create and free 12%, or
/// under load twice, as slow as the others of the same build), and the median over the pairs leaves
/// out a pair with such a process.
/// </summary>
internal sealed class RowResult
{
    private RowResult(Measurement measurement, double[] oldTimes, double[] newTimes, double[] ratios, double[] pairRatios, double tolerance)
    {
        Measurement = measurement;
        OldMedian = Percentile(oldTimes, 0.5);
        NewMedian = Percentile(newTimes, 0.5);
        OldSpread = RelativeSpread(oldTimes);
        NewSpread = RelativeSpread(newTimes);
        Ratio = Percentile(pairRatios, 0.5);
        PairLow = pairRatios.Min();
        PairHigh = pairRatios.Max();
        RatioLow = Percentile(ratios, 0.25);
        RatioHigh = Percentile(ratios, 0.75);
        BestRatio = newTimes.Min() / oldTimes.Min();
        Tolerance = tolerance;
    }

    internal Measurement Measurement { get; }

    /// <summary>The old build's median time per operation, in ns.</summary>
    internal double OldMedian { get; }

    /// <summary>The new build's median time per operation, in ns.</summary>
    internal double NewMedian { get; }

    /// <summary>Half the old rounds' interquartile range, relative to their median (0.01 is ±1%).</summary>
    internal double OldSpread { get; }

    /// <summary>Half the new rounds' interquartile range, relative to their median.</summary>
    internal double NewSpread { get; }

    /// <summary>new/old, the median over the pairs of processes of each pair's median over its rounds: above 1, new is slower.</summary>
    internal double Ratio { get; }

    /// <summary>The lowest of the pairs' median ratios.</summary>
    internal double PairLow { get; }

    /// <summary>The highest of the pairs' median ratios.</summary>
    internal double PairHigh { get; }

    /// <summary>The first quartile of the rounds' ratios.</summary>
    internal double RatioLow { get; }

    /// <summary>The third quartile of the rounds' ratios.</summary>
    internal double RatioHigh { get; }

    /// <summary>
    /// The new build's fastest round over the old build's: what each side does with the machine to
    /// itself, as near as the rounds came to that. Shown beside <see cref="Ratio"/>; no verdict rests on it.
    /// </summary>
    internal double BestRatio { get; }

    internal double Tolerance { get; }

    /// <summary>New is at most <see cref="Tolerance"/> slower than old (<see cref="Ratio"/>).</summary>
    internal bool Passed => Ratio <= 1 + Tolerance;

    /// <summary>The rounds' middle half of ratios takes in 1.00: the difference is within the noise.</summary>
    internal bool WithinSpread => RatioLow <= 1 && RatioHigh >= 1;

    /// <summary>"PASS" or "FAIL" against the tolerance, or "control" for the row with no library code.</summary>
    internal string Verdict => Measurement.IsControl ? "control" : Passed ? "PASS" : "FAIL";

    /// <summary>
    /// Summarises the times per operation (ns) of each round: <paramref name="oldTimes"/>[r] and
    /// <paramref name="newTimes"/>[r] ran in round r, on the pair of processes r mod <paramref name="pairs"/>.
    /// </summary>
    internal static RowResult From(Measurement measurement, IReadOnlyList<double> oldTimes, IReadOnlyList<double> newTimes, int pairs, double tolerance)
    {
        if (oldTimes.Count < pairs || oldTimes.Count != newTimes.Count || pairs < 1)
        {
            throw new ArgumentException($"Each side needs the same number of rounds, at least one per pair of processes ({oldTimes.Count} old, {newTimes.Count} new, {pairs} pairs).", nameof(newTimes));
        }

        double[] ratios = [.. oldTimes.Zip(newTimes, (o, n) => n / o)];
        double[] pairRatios = [.. Enumerable.Range(0, pairs).Select(k => Percentile([.. ratios.Where((_, r) => r % pairs == k)], 0.5))];
        return new RowResult(measurement, [.. oldTimes], [.. newTimes], ratios, pairRatios, tolerance);
    }

    /// <summary>The <paramref name="fraction"/> quantile of <paramref name="values"/> (0.5: the median), interpolated between the two nearest.</summary>
    internal static double Percentile(IReadOnlyList<double> values, double fraction)
    {
        double[] sorted = [.. values.Order()];
        double position = (sorted.Length - 1) * fraction;
        int below = (int)Math.Floor(position);
        int above = Math.Min(below + 1, sorted.Length - 1);
        return sorted[below] + ((sorted[above] - sorted[below]) * (position - below));
    }

    private static double RelativeSpread(double[] values) =>
        (Percentile(values, 0.75) - Percentile(values, 0.25)) / 2 / Percentile(values, 0.5);
}
