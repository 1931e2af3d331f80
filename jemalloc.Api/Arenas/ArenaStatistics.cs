namespace jemalloc;

/// <summary>A picture of one arena's statistics (<c>stats.arenas.&lt;i&gt;.*</c>), taken by <see cref="JemArena.GetStatistics"/>.</summary>
/// <param name="ActiveBytes">Bytes in pages holding live allocations.</param>
/// <param name="DirtyBytes">Bytes in unused pages not yet purged (kept for reuse until they decay).</param>
/// <param name="MuzzyBytes">Bytes in unused pages lazily purged (<c>MADV_FREE</c>).</param>
/// <param name="MappedBytes">Bytes mapped by the arena.</param>
/// <param name="ResidentBytes">Bytes of the arena resident in physical memory.</param>
/// <param name="RetainedBytes">Bytes of virtual memory retained for reuse without being mapped (for an arena taken from the pool, also what its previous owners reserved).</param>
/// <param name="SmallAllocatedBytes">Bytes in live small allocations.</param>
/// <param name="LargeAllocatedBytes">Bytes in live large allocations.</param>
/// <param name="SmallAllocations">Small allocations made since the <see cref="JemArena"/> got the arena.</param>
/// <param name="SmallDeallocations">Small allocations freed since the <see cref="JemArena"/> got the arena (a reset counts each).</param>
/// <param name="LargeAllocations">Large allocations made since the <see cref="JemArena"/> got the arena.</param>
/// <param name="LargeDeallocations">Large allocations freed since the <see cref="JemArena"/> got the arena (a reset counts each).</param>
/// <param name="ThreadCount">Threads bound to the arena (<c>thread.arena</c>).</param>
public readonly record struct ArenaStatistics(
    long ActiveBytes,
    long DirtyBytes,
    long MuzzyBytes,
    long MappedBytes,
    long ResidentBytes,
    long RetainedBytes,
    long SmallAllocatedBytes,
    long LargeAllocatedBytes,
    ulong SmallAllocations,
    ulong SmallDeallocations,
    ulong LargeAllocations,
    ulong LargeDeallocations,
    uint ThreadCount);
