using System.Globalization;

namespace jemalloc;

/// <summary>
/// What <see cref="HugePagePolicy"/> measured on this host and chose for arrays created without
/// options (<see cref="HugePageSelection.Measured"/>): the cost of first touching fresh memory with
/// 4 KiB pages and with transparent huge pages, and the choice they support.
/// </summary>
/// <param name="Mode">The kernel's transparent huge page mode when the measurement was made.</param>
/// <param name="HugePages">Whether arrays created without options ask for huge pages (from <see cref="HugePagePolicy.ThresholdBytes"/>).</param>
/// <param name="NormalPageMillisecondsPerGiB">The first-touch cost of fresh memory in 4 KiB pages over the whole probe, in milliseconds per GiB (0 when not measured).</param>
/// <param name="HugePageMillisecondsPerGiB">The first-touch cost of fresh memory advised for huge pages over the whole probe, in milliseconds per GiB (0 when not measured).</param>
/// <param name="HugePageFraction">The share of the huge-page probe the kernel backed with huge pages, from 0 to 1 (0 when not measured).</param>
/// <param name="ProbeBytes">The size of each probe (4 KiB pages, huge pages) in bytes (0 when not measured).</param>
/// <param name="Rounds">How many slices each probe was written in, taking turns with the other (0 when not measured).</param>
/// <param name="Reason">A sentence saying why the choice was made.</param>
public readonly record struct HugePageMeasurement(
    TransparentHugePageMode Mode,
    bool HugePages,
    double NormalPageMillisecondsPerGiB,
    double HugePageMillisecondsPerGiB,
    double HugePageFraction,
    long ProbeBytes,
    int Rounds,
    string Reason)
{
    /// <summary>
    /// How much dearer the first touch of huge pages may be and still be chosen:
    /// 10%. First touch is paid once per page, while fewer TLB misses on every later random read
    /// are not in the probe, so huge pages get the benefit of a margin about as wide as the noise.
    /// </summary>
    internal const double Margin = 0.10;

    /// <summary>Whether the probe's figures were measured (the OS offered huge pages and the probe ran).</summary>
    public bool Measured => Rounds > 0;

    /// <summary>A one-line account: the choice, the two costs and why.</summary>
    public override string ToString() => Reason;

    /// <summary>
    /// The choice the figures support, with its reason: huge pages unless the kernel gave the probe
    /// none, or their first touch costs more than <see cref="Margin"/> over 4 KiB pages'.
    /// </summary>
    internal static HugePageMeasurement Decide(TransparentHugePageMode mode, double normalMsPerGiB, double hugeMsPerGiB, double hugeFraction, long probeBytes, int rounds)
    {
        string figures = string.Create(CultureInfo.InvariantCulture,
            $"first touch of fresh memory costs {hugeMsPerGiB:F0} ms/GiB in huge pages against {normalMsPerGiB:F0} ms/GiB in 4 KiB pages ({probeBytes / 1048576.0:0.#} MiB of each written in {rounds} interleaved slices, kernel mode {mode.ToString().ToLowerInvariant()})");
        if (!(normalMsPerGiB > 0 && hugeMsPerGiB > 0))
        {
            return new(mode, false, normalMsPerGiB, hugeMsPerGiB, hugeFraction, probeBytes, rounds,
                $"4 KiB pages: the probe could not be timed ({figures}).");
        }

        if (hugeFraction <= 0)
        {
            return new(mode, false, normalMsPerGiB, hugeMsPerGiB, hugeFraction, probeBytes, rounds,
                $"4 KiB pages: the kernel backed none of the advised probe with huge pages, so asking for them gains nothing ({figures}).");
        }

        double ratio = hugeMsPerGiB / normalMsPerGiB;
        bool huge = ratio <= 1 + Margin;
        string verdict = huge
            ? string.Create(CultureInfo.InvariantCulture, $"huge pages: their first touch costs {ratio:F2}x that of 4 KiB pages (up to {1 + Margin:F2}x is accepted, since they also save TLB misses)")
            : string.Create(CultureInfo.InvariantCulture, $"4 KiB pages: the first touch of huge pages costs {ratio:F2}x that of 4 KiB pages, more than the {1 + Margin:F2}x accepted");
        return new(mode, huge, normalMsPerGiB, hugeMsPerGiB, hugeFraction, probeBytes, rounds,
            string.Create(CultureInfo.InvariantCulture, $"{verdict}; {figures}, {hugeFraction * 100:F0}% of the huge-page probe in huge pages."));
    }

    /// <summary>The choice where nothing is measured: 4 KiB pages, because <paramref name="why"/>.</summary>
    internal static HugePageMeasurement NotMeasured(TransparentHugePageMode mode, string why) =>
        new(mode, false, 0, 0, 0, 0, 0, $"4 KiB pages, not measured: {why}");
}
