namespace jemalloc.Cli.Caching;

/// <summary>The sides' names and their caches.</summary>
public static class CacheSides
{
    /// <summary>The name of a side, as --side takes it.</summary>
    public static string Name(CacheSide side) => side switch
    {
        CacheSide.Native => "native",
        CacheSide.BitFasterLru => "bitfaster-lru",
        CacheSide.BitFasterLfu => "bitfaster-lfu",
        CacheSide.MemoryCache => "memorycache",
        _ => "dictionary",
    };

    /// <summary>The side named <paramref name="name"/>, or null.</summary>
    public static CacheSide? Parse(string name) => Enum.GetValues<CacheSide>().Select(s => (CacheSide?)s).FirstOrDefault(s => Name(s!.Value) == name);

    /// <summary>A new cache of <paramref name="side"/> over <paramref name="space"/> with <paramref name="capacity"/>.</summary>
    /// <param name="side">The side.</param>
    /// <param name="space">The keys.</param>
    /// <param name="capacity">What it may hold.</param>
    /// <param name="expiring">Whether entries will have lifetimes (BitFaster then needs its time-aware caches).</param>
    /// <param name="prepareKeys">Whether to make every key before the runs (BitFaster's small shapes).</param>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> or <paramref name="capacity"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The capacity is out of the cache's range (e.g. a budget below <see cref="NativeCache.MinimumBudgetBytes"/>).</exception>
    public static CacheSubject Create(CacheSide side, CacheKeySpace space, CacheCapacity capacity, bool expiring, bool prepareKeys)
    {
        ArgumentNullException.ThrowIfNull(space);
        ArgumentNullException.ThrowIfNull(capacity);
        if (prepareKeys)
        {
            space.PrepareKeys(asStrings: side != CacheSide.Native);
        }

        return side switch
        {
            CacheSide.Native => new NativeCacheSubject(space, capacity),
            CacheSide.BitFasterLru => new BitFasterSubject(side, space, capacity, expiring),
            CacheSide.BitFasterLfu => new BitFasterSubject(side, space, capacity, expiring),
            CacheSide.MemoryCache => new MemoryCacheSubject(space, capacity),
            _ => new DictionarySubject(space),
        };
    }
}
