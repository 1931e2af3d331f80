
using jemalloc.ArenaBooks;

namespace jemalloc;

/// <summary>
/// How a high-level structure's memory is obtained: the jemalloc flags (arena, alignment, thread
/// cache) and whether to ask the kernel for transparent huge pages.
/// </summary>
/// <param name="Flags">Flags passed to <c>mallocx</c>; zeroing is always added by the structures.</param>
/// <param name="HugePages">
/// Align the memory to 2 MiB and advise the kernel to back it with huge pages
/// (<c>madvise(MADV_HUGEPAGE)</c>). Ignored for allocations smaller than one huge page and where the
/// OS offers none.
/// </param>
public readonly record struct AllocationOptions(MallocxFlags Flags, bool HugePages = false)
{
    /// <summary>The default: jemalloc's automatic arena and thread cache, 4 KiB pages.</summary>
    public static AllocationOptions Default => default;

    /// <summary>The default arena, with huge-page backing for allocations of 2 MiB or more.</summary>
    public static AllocationOptions WithHugePages => new(MallocxFlags.None, HugePages: true);

    // The JemArena the options came from (JemArena.Options): options kept past that arena's Dispose
    // keep throwing even after jemalloc gives its index to a new arena, instead of allocating there.
    internal ArenaAccount? Account { get; init; }
}
