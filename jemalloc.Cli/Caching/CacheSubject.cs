namespace jemalloc.Cli.Caching;

/// <summary>
/// One side's cache under <c>jembench cache</c>: reads that check what they find (<see cref="CacheData.Check"/>)
/// and writes of a key's next version, from any number of threads at once.
/// </summary>
public abstract class CacheSubject : IDisposable
{
    /// <summary>Wraps a cache over <paramref name="space"/>'s keys.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> is null.</exception>
    protected CacheSubject(CacheSide side, CacheKeySpace space)
    {
        ArgumentNullException.ThrowIfNull(space);
        Side = side;
        Space = space;
        Name = CacheSides.Name(side);
    }

    /// <summary>The side.</summary>
    public CacheSide Side { get; }

    /// <summary>The side's name, for messages.</summary>
    public string Name { get; }

    /// <summary>The keys.</summary>
    protected CacheKeySpace Space { get; }

    /// <summary>Reads key <paramref name="key"/> and checks its value if found.</summary>
    /// <returns>Whether it was found.</returns>
    /// <exception cref="jemalloc.Benchmarks.Infrastructure.BenchmarkVerificationException">The value found is not one written for the key.</exception>
    public abstract bool Read(int key);

    /// <summary>Writes key <paramref name="key"/>'s next version, with its lifetime if <paramref name="expiring"/> (<see cref="CacheData.Lifetime"/>).</summary>
    public abstract void Write(int key, bool expiring);

    /// <summary>The entries now and their key and value bytes (visits them all: not for timed code).</summary>
    public abstract (long Entries, long EntryBytes) Contents();

    /// <summary>The native cache's statistics, or null for a managed side.</summary>
    public virtual NativeCacheStatistics? NativeStatistics() => null;

    /// <summary>Gives back what has expired now, as far as the cache can be asked to.</summary>
    public abstract void TrimExpired();

    /// <summary>Whether the cache drops entries at the end of their lifetime.</summary>
    public virtual bool Expires => true;

    /// <summary>Frees the cache.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Frees the cache.</summary>
    /// <param name="disposing">Whether this is <see cref="Dispose()"/>.</param>
    protected virtual void Dispose(bool disposing)
    {
    }

    /// <summary>Key <paramref name="key"/>'s next version as a new array, as a managed cache holds it.</summary>
    protected byte[] NewValue(int key)
    {
        var value = new byte[Space.ValueLength(key)];
        CacheData.WriteValue(value, key, Space.NextVersion(key));
        return value;
    }
}
