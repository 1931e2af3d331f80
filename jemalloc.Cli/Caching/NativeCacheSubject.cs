namespace jemalloc.Cli.Caching;

/// <summary>The native side: a <see cref="NativeCache"/> with the capacity's byte budget; reads check the value in place, through the lease.</summary>
public sealed class NativeCacheSubject : CacheSubject
{
    // A writer's value is made in a buffer of its thread's and copied in by the cache.
    [ThreadStatic]
    private static byte[]? _buffer;

    private readonly NativeCache _cache;

    /// <summary>Creates the cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> or <paramref name="capacity"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The budget is below <see cref="NativeCache.MinimumBudgetBytes"/>.</exception>
    public NativeCacheSubject(CacheKeySpace space, CacheCapacity capacity) : base(CacheSide.Native, space)
    {
        ArgumentNullException.ThrowIfNull(capacity);
        _cache = new NativeCache(new NativeCacheOptions { BudgetBytes = capacity.BudgetBytes });
    }

    /// <inheritdoc/>
    public override bool Read(int key)
    {
        Span<byte> scratch = stackalloc byte[CacheData.MaxKeyLength];
        if (!_cache.TryGet(Space.KeyBytes(key, scratch), out NativeCacheLease lease))
        {
            return false;
        }

        try
        {
            CacheData.Check(Name, Space, key, lease.Span);
        }
        finally
        {
            lease.Dispose();
        }

        return true;
    }

    /// <inheritdoc/>
    public override void Write(int key, bool expiring)
    {
        Span<byte> scratch = stackalloc byte[CacheData.MaxKeyLength];
        Span<byte> value = (_buffer ??= new byte[CacheData.MaxValueLength]).AsSpan(0, Space.ValueLength(key));
        CacheData.WriteValue(value, key, Space.NextVersion(key));
        TimeSpan lifetime = expiring ? CacheData.Lifetime(key) : TimeSpan.Zero;
        _cache.Set(Space.KeyBytes(key, scratch), value,
            lifetime > TimeSpan.Zero ? new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = lifetime } : default);
    }

    /// <inheritdoc/>
    public override (long Entries, long EntryBytes) Contents()
    {
        NativeCacheStatistics statistics = _cache.GetStatistics();
        return (statistics.Entries, statistics.KeyValueBytes);
    }

    /// <inheritdoc/>
    public override NativeCacheStatistics? NativeStatistics() => _cache.GetStatistics();

    /// <inheritdoc/>
    public override void TrimExpired() => _cache.RemoveExpired();

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _cache.Dispose();
        }

        base.Dispose(disposing);
    }
}
