namespace jemalloc;

/// <summary>The settings of a <see cref="NativeCache"/>, fixed when it is created.</summary>
public sealed class NativeCacheOptions
{
    /// <summary>
    /// The most bytes the cache may hold from the allocator: every block it allocates (entries, their
    /// headers and the index), counted at the size the allocator really reserves. Writes evict to stay
    /// within it. Required; at least <see cref="NativeCache.MinimumBudgetBytes"/>.
    /// </summary>
    public required long BudgetBytes { get; init; }

    /// <summary>
    /// How many independently locked shards the keys are spread over: a power of two from 1 to 1024, or 0
    /// (the default) to choose from the processor count and the budget.
    /// </summary>
    public int ShardCount { get; init; }

    /// <summary>The clock that expiry is measured against; <see cref="TimeProvider.System"/> by default.</summary>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>
    /// How often the memory of expired entries is given back when nothing else touches the cache;
    /// <see cref="Timeout.InfiniteTimeSpan"/> to give it back only during the cache's own calls. One second by default.
    /// </summary>
    public TimeSpan ExpirationScanInterval { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Whether the cache's memory asks for transparent huge pages where the host has them (false by default).
    /// With them, segments are at least 2 MiB, each advised for huge pages, where every shard's share of the
    /// budget holds <see cref="NativeCache.HugeSegmentsPerShard"/> of them (below that, only the tables of 2 MiB
    /// or more are): random reads save a TLB miss each, and the larger segments hold a few percent fewer entries.
    /// </summary>
    public bool HugePages { get; init; }
}
