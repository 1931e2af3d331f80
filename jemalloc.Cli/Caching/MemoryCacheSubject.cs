using Microsoft.Extensions.Caching.Memory;

namespace jemalloc.Cli.Caching;

/// <summary>
/// The <c>MemoryCache</c> side: Microsoft.Extensions.Caching.Memory with the capacity's <c>SizeLimit</c>, each
/// entry's size its key and value bytes. When full it refuses new entries and compacts in the background, as it does.
/// </summary>
public sealed class MemoryCacheSubject : CacheSubject
{
    private readonly MemoryCache _cache;

    /// <summary>Creates the cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> or <paramref name="capacity"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The size limit is negative.</exception>
    public MemoryCacheSubject(CacheKeySpace space, CacheCapacity capacity) : base(CacheSide.MemoryCache, space)
    {
        ArgumentNullException.ThrowIfNull(capacity);
        _cache = new MemoryCache(new MemoryCacheOptions { SizeLimit = capacity.SizeLimit });
    }

    /// <inheritdoc/>
    public override bool Read(int key)
    {
        if (!_cache.TryGetValue(Space.KeyString(key), out object? value))
        {
            return false;
        }

        CacheData.Check(Name, Space, key, (byte[])value!);
        return true;
    }

    /// <inheritdoc/>
    public override void Write(int key, bool expiring)
    {
        string name = Space.KeyString(key);
        byte[] value = NewValue(key);
        using ICacheEntry entry = _cache.CreateEntry(name);
        entry.Size = name.Length + value.Length;
        entry.Value = value;
        TimeSpan lifetime = expiring ? CacheData.Lifetime(key) : TimeSpan.Zero;
        if (lifetime > TimeSpan.Zero)
        {
            entry.AbsoluteExpirationRelativeToNow = lifetime;
        }
    }

    /// <inheritdoc/>
    public override (long Entries, long EntryBytes) Contents()
    {
        long entries = 0, bytes = 0;
        foreach (object key in _cache.Keys)
        {
            if (_cache.TryGetValue(key, out object? value) && value is byte[] array)
            {
                entries++;
                bytes += ((string)key).Length + array.Length;
            }
        }

        return (entries, bytes);
    }

    /// <inheritdoc/>
    public override void TrimExpired() => _cache.Compact(0);

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
