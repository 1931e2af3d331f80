using System.Runtime.CompilerServices;
using jemalloc.HugePages;

namespace jemalloc;

/// <summary>
/// When <see cref="HugeArray{T}"/> and <see cref="SafeArray{T}"/> ask for transparent huge pages by
/// themselves: created without <see cref="AllocationOptions"/>, an array of at least
/// <see cref="ThresholdBytes"/> gets <see cref="AllocationOptions.WithHugePages"/>, if the kernel
/// offers huge pages at all. Explicit options are always used as given.
/// </summary>
/// <remarks>
/// <para>
/// Why on by default, from 2 MiB: creating and filling freshly allocated memory is dominated by page
/// faults, one per 4 KiB page, and huge pages take one per 2 MiB, so the gain starts at one huge page
/// and the threshold is one huge page. <c>jembench hugepages</c> measures it on your machine (the
/// project's figures are in docs/results/huge-pages.md).
/// </para>
/// <para>
/// The cost: only whole 2 MiB pages inside the array are advised, so resident memory does not grow
/// past the array, but each first touch of a huge page makes all of its 2 MiB resident. An array that
/// is allocated big and then touched only here and there uses more memory with huge pages: raise
/// <see cref="ThresholdBytes"/>, or pass <see cref="AllocationOptions.Default"/>, for such arrays.
/// </para>
/// </remarks>
public static class HugePagePolicy
{
    /// <summary>The default threshold: one 2 MiB huge page.</summary>
    public const long DefaultThresholdBytes = 2L << 20;

    private static readonly Lazy<bool> KernelOffersHugePages = new(() => HugePageProbe.IsAvailable);
    private static long s_thresholdBytes = DefaultThresholdBytes;

    /// <summary>
    /// The size from which arrays created without options ask for huge pages;
    /// <see cref="long.MaxValue"/> switches the default off.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static long ThresholdBytes
    {
        get => Volatile.Read(ref s_thresholdBytes);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Volatile.Write(ref s_thresholdBytes, value);
        }
    }

    /// <summary>The options an array of <paramref name="length"/> elements of <typeparamref name="T"/> gets when created without any.</summary>
    public static AllocationOptions DefaultFor<T>(long length)
        where T : unmanaged
    {
        int elementSize = Unsafe.SizeOf<T>();
        long bytes = length <= 0 ? 0 : length > long.MaxValue / elementSize ? long.MaxValue : length * elementSize;
        return DefaultForBytes(bytes, KernelOffersHugePages.Value);
    }

    /// <summary>The options of a structure, writer block or pool block of <paramref name="bytes"/> created without any: the one default.</summary>
    internal static AllocationOptions DefaultForSize(nuint bytes) =>
        DefaultForBytes(bytes > long.MaxValue ? long.MaxValue : (long)bytes, KernelOffersHugePages.Value);

    /// <summary>
    /// Whether an allocation of <paramref name="size"/> bytes whose options ask for huge pages gets them
    /// (2 MiB alignment and the advice): only when it can hold a whole huge page. Every allocation path
    /// (structures, writer, pool, arenas) asks here.
    /// </summary>
    internal static bool Advises(nuint size, bool asked) => asked && size >= HugePageAdvisor.HugePageSize;

    internal static AllocationOptions DefaultForBytes(long bytes, bool kernelOffersHugePages) =>
        kernelOffersHugePages && bytes > 0 && bytes >= ThresholdBytes ? AllocationOptions.WithHugePages : AllocationOptions.Default;
}
