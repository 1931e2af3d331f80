using BitFaster.Caching;
using BitFaster.Caching.Lfu;
using BitFaster.Caching.Lru;

namespace jemalloc.Cli.Caching;

/// <summary>
/// The BitFaster sides: <c>ConcurrentLru&lt;string, byte[]&gt;</c> or <c>ConcurrentLfu&lt;string, byte[]&gt;</c> with the
/// capacity's entry count; for the expiry phase the same caches built with a per-entry lifetime (BitFaster's
/// time-aware variants, which its builders make).
/// </summary>
public sealed class BitFasterSubject : CacheSubject
{
    private readonly ICache<string, byte[]> _cache;

    /// <summary>Creates the cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> or <paramref name="capacity"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="side"/> is not a BitFaster side, or the capacity is below BitFaster's smallest.</exception>
    public BitFasterSubject(CacheSide side, CacheKeySpace space, CacheCapacity capacity, bool expiring) : base(side, space)
    {
        ArgumentNullException.ThrowIfNull(capacity);
        if (side is not (CacheSide.BitFasterLru or CacheSide.BitFasterLfu))
        {
            throw new ArgumentOutOfRangeException(nameof(side), side, "Not a BitFaster side.");
        }

        _cache = (side, expiring) switch
        {
            (CacheSide.BitFasterLru, false) => new ConcurrentLru<string, byte[]>(capacity.Entries),
            (CacheSide.BitFasterLfu, false) => new ConcurrentLfu<string, byte[]>(capacity.Entries),
            (CacheSide.BitFasterLru, true) => new ConcurrentLruBuilder<string, byte[]>().WithCapacity(capacity.Entries).WithExpireAfter(new Lifetimes()).Build(),
            _ => new ConcurrentLfuBuilder<string, byte[]>().WithCapacity(capacity.Entries).WithExpireAfter(new Lifetimes()).Build(),
        };
    }

    /// <inheritdoc/>
    public override bool Read(int key)
    {
        if (!_cache.TryGet(Space.KeyString(key), out byte[]? value))
        {
            return false;
        }

        CacheData.Check(Name, Space, key, value);
        return true;
    }

    /// <inheritdoc/>
    public override void Write(int key, bool expiring) => _cache.AddOrUpdate(Space.KeyString(key), NewValue(key));

    /// <inheritdoc/>
    public override (long Entries, long EntryBytes) Contents()
    {
        // ConcurrentLfu evicts in buffered maintenance, so between two passes it may hold a few entries
        // past its capacity: count what it holds once the pending maintenance has run.
        if (_cache is ConcurrentLfu<string, byte[]> lfu)
        {
            lfu.DoMaintenance();
        }

        long entries = 0, bytes = 0;
        foreach (KeyValuePair<string, byte[]> entry in _cache)
        {
            entries++;
            bytes += entry.Key.Length + entry.Value.Length;
        }

        return (entries, bytes);
    }

    /// <inheritdoc/>
    public override void TrimExpired()
    {
        if (_cache.Policy.ExpireAfter.HasValue)
        {
            _cache.Policy.ExpireAfter.Value!.TrimExpired();
        }
    }

    // Each entry's lifetime from its value's key (its first 8 bytes): CacheData.Lifetime, or a year for the keys without one.
    private sealed class Lifetimes : IExpiryCalculator<string, byte[]>
    {
        private static readonly Duration Never = Duration.FromDays(365);

        public Duration GetExpireAfterCreate(string key, byte[] value) => Of(value);

        public Duration GetExpireAfterRead(string key, byte[] value, Duration current) => current;

        public Duration GetExpireAfterUpdate(string key, byte[] value, Duration current) => Of(value);

        private static Duration Of(byte[] value)
        {
            TimeSpan lifetime = CacheData.Lifetime((int)BitConverter.ToInt64(value));
            return lifetime > TimeSpan.Zero ? Duration.FromTimeSpan(lifetime) : Never;
        }
    }
}
