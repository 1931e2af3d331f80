namespace jemalloc;

/// <summary>A snapshot of a <see cref="NativeCache"/>'s counters (<see cref="NativeCache.GetStatistics"/>).</summary>
public readonly record struct NativeCacheStatistics
{
    /// <summary>Reads that found their key.</summary>
    public long Hits { get; init; }

    /// <summary>Reads that did not find their key (or found it expired).</summary>
    public long Misses { get; init; }

    /// <summary>Entries written (new keys and replacements).</summary>
    public long Writes { get; init; }

    /// <summary>Entries evicted to keep the cache within its budget.</summary>
    public long EvictedForCapacity { get; init; }

    /// <summary>Entries dropped because they expired.</summary>
    public long Expired { get; init; }

    /// <summary>Entries removed by <see cref="NativeCache.Remove(ReadOnlySpan{byte})"/>.</summary>
    public long Removed { get; init; }

    /// <summary>Entries replaced by a write of the same key.</summary>
    public long Replaced { get; init; }

    /// <summary>
    /// Of <see cref="Replaced"/>, the writes that went over the old value's bytes: the new value fit
    /// them and no lease was open on their segment.
    /// </summary>
    public long ReplacedInPlace { get; init; }

    /// <summary>
    /// Bytes in the cache's segments that no entry uses now: entries replaced (not in place), removed or
    /// dropped as expired, and what shorter values replaced in place left over. They count in
    /// <see cref="AllocatedBytes"/> until their segment is reclaimed.
    /// </summary>
    public long DeadBytes { get; init; }

    /// <summary>Dead bytes given back so far by reclaiming their segments (for eviction, expiry or compaction).</summary>
    public long DeadBytesReclaimed { get; init; }

    /// <summary>Segments reclaimed for their dead bytes, their live entries moved rather than evicted.</summary>
    public long SegmentsCompacted { get; init; }

    /// <summary>Entries dropped by <see cref="NativeCache.Clear"/>.</summary>
    public long Cleared { get; init; }

    /// <summary>Entries the cache holds now.</summary>
    public long Entries { get; init; }

    /// <summary>The key and value bytes of those entries.</summary>
    public long KeyValueBytes { get; init; }

    /// <summary>
    /// Bytes the cache holds from the allocator now, at the size the allocator reserves for each block:
    /// entries, headers, the index and its other tables, and memory still held by open leases.
    /// </summary>
    public long AllocatedBytes { get; init; }

    /// <summary>
    /// What jemalloc's own statistics report allocated in the cache's arenas when the snapshot was taken
    /// (refreshed by <see cref="NativeCache.GetStatistics"/>): an independent check of <see cref="AllocatedBytes"/>.
    /// </summary>
    public long ArenaAllocatedBytes { get; init; }

    /// <summary>Of <see cref="AllocatedBytes"/>, what open leases keep after their entries left the cache.</summary>
    public long PinnedBytes { get; init; }

    /// <summary>The budget <see cref="AllocatedBytes"/> never passes.</summary>
    public long BudgetBytes { get; init; }

    /// <summary>The share of reads that hit; 0 before any read.</summary>
    public double HitRatio => Hits + Misses == 0 ? 0 : (double)Hits / (Hits + Misses);

    /// <summary>Allocated bytes per entry beyond its key and value; 0 when the cache is empty.</summary>
    public double OverheadBytesPerEntry => Entries == 0 ? 0 : (double)(AllocatedBytes - KeyValueBytes) / Entries;
}
