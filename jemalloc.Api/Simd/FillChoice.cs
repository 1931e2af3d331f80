using System.Globalization;

namespace jemalloc;

/// <summary>
/// What <see cref="FillPolicy"/>'s automatic setting chose for writes in one size band, and the
/// figures it chose by: the best write speed each kernel reached on the band's first
/// big fills, written alternately by each.
/// </summary>
/// <param name="FromBytes">The smallest write the choice applies to, in bytes.</param>
/// <param name="ToBytes">The first write size it no longer applies to, in bytes; <see cref="long.MaxValue"/> when the band has no upper bound.</param>
/// <param name="NonTemporal">Whether writes in the band stream (non-temporal stores); otherwise they use ordinary vector stores.</param>
/// <param name="OrdinaryBytesPerSecond">The ordinary kernel's best speed over its fills (0 when not measured).</param>
/// <param name="NonTemporalBytesPerSecond">The streaming kernel's best speed over its fills (0 when not measured).</param>
/// <param name="SamplesPerKernel">How many fills each kernel wrote and was timed on (0 when the CPU has no streaming stores).</param>
public readonly record struct FillChoice(long FromBytes, long ToBytes, bool NonTemporal, double OrdinaryBytesPerSecond, double NonTemporalBytesPerSecond, int SamplesPerKernel)
{
    /// <summary>A one-line account: the band, the kernel chosen and the speeds measured, in GB/s.</summary>
    public override string ToString() => SamplesPerKernel == 0
        ? $"{DescribeBand(FromBytes, ToBytes)}: ordinary stores (streaming not measured: this CPU has no streaming stores, or nothing could be timed)"
        : string.Create(CultureInfo.InvariantCulture,
            $"{DescribeBand(FromBytes, ToBytes)}: {(NonTemporal ? "non-temporal (streaming) stores" : "ordinary stores")}, best of {SamplesPerKernel} fills each, ordinary {OrdinaryBytesPerSecond / 1e9:F1} GB/s, non-temporal {NonTemporalBytesPerSecond / 1e9:F1} GB/s");

    /// <summary>A band of write sizes in MiB, such as "writes of 32-128 MiB" or "writes from 512 MiB".</summary>
    internal static string DescribeBand(long fromBytes, long toBytes) => toBytes == long.MaxValue
        ? string.Create(CultureInfo.InvariantCulture, $"writes from {fromBytes / 1048576.0:0.#} MiB")
        : string.Create(CultureInfo.InvariantCulture, $"writes of {fromBytes / 1048576.0:0.#}-{toBytes / 1048576.0:0.#} MiB");
}
