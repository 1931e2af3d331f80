namespace jemalloc.ArenaBooks;

/// <summary>
/// jemalloc's cumulative allocation counters of one arena (<c>stats.arenas.&lt;i&gt;.{small,large}.{nmalloc,ndalloc}</c>),
/// as a pooled arena ended its previous owner's use: its next owner's statistics start from them.
/// </summary>
internal readonly record struct ArenaCounts(ulong SmallAllocations, ulong SmallDeallocations, ulong LargeAllocations, ulong LargeDeallocations);
