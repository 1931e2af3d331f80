using jemalloc.Interop;

namespace jemalloc.HugePages;

/// <summary>
/// How memory is asked to be backed by transparent huge pages: 2 MiB alignment, so that whole huge
/// pages fit in it, then <c>madvise(MADV_HUGEPAGE)</c> over the whole huge pages it covers. Whether
/// an allocation gets them is HugePagePolicy's decision.
/// </summary>
internal static unsafe class HugePageAdvisor
{
    /// <summary>log2 of the size of a transparent huge page on x64 Linux.</summary>
    internal const int HugePageShift = 21;

    /// <summary>The size of a transparent huge page on x64 Linux: 2 MiB.</summary>
    internal const nuint HugePageSize = (nuint)1 << HugePageShift;

    private const int LgAlignMask = 0x3F;

    /// <summary>The flags with their alignment raised to 2 MiB.</summary>
    internal static int AlignFlags(int flags) =>
        (flags & LgAlignMask) < HugePageShift ? (flags & ~LgAlignMask) | HugePageShift : flags;

    /// <summary>
    /// Advises the kernel to back the whole huge pages of a 2 MiB-aligned allocation with huge pages.
    /// Advice only: where THP is off or absent the kernel refuses it and the memory works as it is.
    /// </summary>
    internal static void Advise(void* memory, nuint size)
    {
        if (OperatingSystem.IsLinux() && SystemHugePageSource.Instance.Unsupported is null)
        {
            _ = Libc.Madvise((nint)memory, size & ~(HugePageSize - 1), Libc.MadvHugePage);
        }
    }
}
