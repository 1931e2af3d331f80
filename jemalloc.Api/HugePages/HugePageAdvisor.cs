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

    // Per arena index: whether memory of that arena was ever advised. The advice stays on the
    // arena's address ranges after its memory is freed and purged (the kernel keeps it with the
    // mapping), so such an arena cannot be handed to an owner that did not ask for huge pages.
    private static readonly int[] AdvisedArenas = new int[MallocxFlags.ArenaLimit];

    /// <summary>The flags with their alignment raised to 2 MiB.</summary>
    internal static int AlignFlags(int flags) =>
        (flags & LgAlignMask) < HugePageShift ? (flags & ~LgAlignMask) | HugePageShift : flags;

    /// <summary>
    /// Advises the kernel to back the whole huge pages of a 2 MiB-aligned allocation with huge pages.
    /// Advice only: where THP is off or absent the kernel refuses it and the memory works as it is.
    /// The arena named by <paramref name="flags"/>, if any, is recorded as advised (<see cref="WasAdvisedIn"/>).
    /// </summary>
    internal static void Advise(void* memory, nuint size, int flags)
    {
        if (OperatingSystem.IsLinux() && SystemHugePageSource.Instance.Unsupported is null)
        {
            uint arenaPlusOne = (uint)flags >> MallocxFlags.ArenaShift;
            if (arenaPlusOne != 0 && Volatile.Read(ref AdvisedArenas[arenaPlusOne - 1]) == 0)
            {
                // Before the advice, so that whoever sees the advice's effect sees the record too.
                Volatile.Write(ref AdvisedArenas[arenaPlusOne - 1], 1);
            }

            _ = Libc.Madvise((nint)memory, size & ~(HugePageSize - 1), Libc.MadvHugePage);
        }
    }

    /// <summary>Whether memory of arena <paramref name="arena"/> was advised since the index was last <see cref="ForgetArena">forgotten</see>.</summary>
    internal static bool WasAdvisedIn(uint arena) =>
        arena < (uint)AdvisedArenas.Length && Volatile.Read(ref AdvisedArenas[arena]) != 0;

    /// <summary>Forgets the advice of arena <paramref name="arena"/>: it was destroyed, so its address ranges are unmapped.</summary>
    internal static void ForgetArena(uint arena)
    {
        if (arena < (uint)AdvisedArenas.Length)
        {
            Volatile.Write(ref AdvisedArenas[arena], 0);
        }
    }
}
