using System.Runtime.CompilerServices;
using jemalloc.ArenaBooks;
using jemalloc.Internal;
using jemalloc.Mallctl;

namespace jemalloc.Memory;

/// <summary>
/// Checks <see cref="MallocxFlags"/> before they reach jemalloc, which trusts them: those of an
/// <see cref="AllocationOptions"/> (<see cref="NativeAllocator"/>) and those given to every
/// <c>*allocx</c> function of <c>Jem</c>. Unchecked, an explicit thread cache that was never created (or was
/// destroyed) makes jemalloc read past its cache table, an arena index that names no arena makes it
/// create one silently or read past its arena table, and an alignment no block can have only fails later.
/// </summary>
/// <remarks>
/// Cheap on the common path: flags of 0 are never validated, a known thread cache is one array
/// load, and an arena found to exist is remembered by <see cref="ArenaDirectory"/> (which forgets it
/// before any <c>arena.&lt;i&gt;.destroy</c> the library lets through).
/// </remarks>
internal static class AllocationFlagsValidator
{
    /// <summary>Throws when <paramref name="flags"/> name a thread cache, arena or alignment that cannot be used.</summary>
    /// <exception cref="ArgumentException">
    /// The flags name a thread cache not created through the library's <c>tcache.create</c> (or destroyed), an arena
    /// that does not exist, or an alignment larger than jemalloc's largest size class.
    /// </exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Validate(MallocxFlags flags, string paramName)
    {
        int value = flags.Value;
        int tcache = (value & MallocxFlags.TcacheMask) >> 8;
        // Field 0: the thread's automatic cache; 1: MALLOCX_TCACHE_NONE; n >= 2: explicit cache n - 2.
        if (tcache >= 2 && !ThreadCacheRegistry.IsUser((uint)tcache - 2))
        {
            ThrowThreadCache(flags, (uint)tcache - 2, paramName);
        }

        uint arenaPlusOne = (uint)value >> MallocxFlags.ArenaShift;
        // A JemArena's index is checked by its account (a destroyed one throws ObjectDisposedException).
        if (arenaPlusOne != 0 && ArenaAccounts.FindByIndex(arenaPlusOne - 1) is null && !ArenaDirectory.Exists(arenaPlusOne - 1))
        {
            ThrowArena(flags, arenaPlusOne - 1, paramName);
        }

        int lgAlign = value & MallocxFlags.LgAlignMask;
        if (lgAlign > MaxLgAlign)
        {
            ThrowAlignment(flags, lgAlign, paramName);
        }
    }

    // jemalloc's largest size class is below 2^63 on 64-bit and 2^31 on 32-bit: no block can be aligned further.
    private static int MaxLgAlign => IntPtr.Size == 8 ? 62 : 30;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowThreadCache(MallocxFlags flags, uint cache, string paramName) =>
        ThrowHelper.ThrowArgument(paramName,
            $"The flags ({flags}) name thread cache {cache}, which cannot be used: {ThreadCacheRegistry.DescribeRefusal(cache)}");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowArena(MallocxFlags flags, uint arena, string paramName) =>
        ThrowHelper.ThrowArgument(paramName,
            $"The flags ({flags}) name arena {arena}, which does not exist (arenas.narenas is {MallctlKeys.Arenas.Narenas.Get()}, or the arena was destroyed). Use a JemArena's Options, or an index from arenas.create.");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowAlignment(MallocxFlags flags, int lgAlign, string paramName) =>
        ThrowHelper.ThrowArgument(paramName,
            $"The flags ({flags}) ask for an alignment of 2^{lgAlign} bytes, more than any jemalloc block can have (at most 2^{MaxLgAlign}).");
}
