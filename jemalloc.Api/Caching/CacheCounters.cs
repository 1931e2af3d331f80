namespace jemalloc.Caching;

/// <summary>A shard's counters, changed under its lock and summed by <see cref="NativeCache.GetStatistics"/>.</summary>
internal struct CacheCounters
{
    internal long Hits;
    internal long Misses;
    internal long Writes;
    internal long Evicted;
    internal long Expired;
    internal long Removed;
    internal long Replaced;
    internal long ReplacedInPlace;
    internal long SegmentsCompacted;
    internal long DeadBytesReclaimed;

    /// <summary>Adds <paramref name="other"/>'s counts to these.</summary>
    internal void Add(in CacheCounters other)
    {
        Hits += other.Hits;
        Misses += other.Misses;
        Writes += other.Writes;
        Evicted += other.Evicted;
        Expired += other.Expired;
        Removed += other.Removed;
        Replaced += other.Replaced;
        ReplacedInPlace += other.ReplacedInPlace;
        SegmentsCompacted += other.SegmentsCompacted;
        DeadBytesReclaimed += other.DeadBytesReclaimed;
    }
}
