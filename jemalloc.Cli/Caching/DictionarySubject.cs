using System.Collections.Concurrent;

namespace jemalloc.Cli.Caching;

/// <summary>The ceiling: a <c>ConcurrentDictionary&lt;string, byte[]&gt;</c> that holds every key written, with no eviction and no expiry.</summary>
public sealed class DictionarySubject : CacheSubject
{
    private readonly ConcurrentDictionary<string, byte[]> _map = new();

    /// <summary>Creates the dictionary.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> is null.</exception>
    public DictionarySubject(CacheKeySpace space) : base(CacheSide.Dictionary, space)
    {
    }

    /// <inheritdoc/>
    public override bool Expires => false;

    /// <inheritdoc/>
    public override bool Read(int key)
    {
        if (!_map.TryGetValue(Space.KeyString(key), out byte[]? value))
        {
            return false;
        }

        CacheData.Check(Name, Space, key, value);
        return true;
    }

    /// <inheritdoc/>
    public override void Write(int key, bool expiring) => _map[Space.KeyString(key)] = NewValue(key);

    /// <inheritdoc/>
    public override (long Entries, long EntryBytes) Contents()
    {
        long entries = 0, bytes = 0;
        foreach (KeyValuePair<string, byte[]> entry in _map)
        {
            entries++;
            bytes += entry.Key.Length + entry.Value.Length;
        }

        return (entries, bytes);
    }

    /// <inheritdoc/>
    public override void TrimExpired()
    {
        // Nothing expires in a dictionary.
    }
}
