using System.Globalization;

namespace jemalloc;

/// <summary>
/// What <see cref="FillPolicy"/>'s automatic setting chose for fills larger than the last-level
/// cache, and the figures it chose by: the best write speed each kernel reached on the slices of
/// the first big fills, written alternately by each.
/// </summary>
/// <param name="NonTemporal">Whether big fills stream (non-temporal stores); otherwise they use ordinary vector stores.</param>
/// <param name="OrdinaryBytesPerSecond">The ordinary kernel's best speed over its slices (0 when not measured).</param>
/// <param name="NonTemporalBytesPerSecond">The streaming kernel's best speed over its slices (0 when not measured).</param>
/// <param name="SamplesPerKernel">How many slices each kernel wrote and was timed on (0 when the CPU has no streaming stores).</param>
public readonly record struct FillChoice(bool NonTemporal, double OrdinaryBytesPerSecond, double NonTemporalBytesPerSecond, int SamplesPerKernel)
{
    /// <summary>A one-line account: the kernel chosen and the speeds measured, in GB/s.</summary>
    public override string ToString() => SamplesPerKernel == 0
        ? "ordinary stores (streaming not measured: this CPU has no streaming stores, or nothing could be timed)"
        : string.Create(CultureInfo.InvariantCulture,
            $"{(NonTemporal ? "non-temporal (streaming) stores" : "ordinary stores")}: best of {SamplesPerKernel} slices each, ordinary {OrdinaryBytesPerSecond / 1e9:F1} GB/s, non-temporal {NonTemporalBytesPerSecond / 1e9:F1} GB/s");
}
