namespace jemalloc.Cli.Caching;

/// <summary>A cache that <c>jembench cache</c> measures.</summary>
public enum CacheSide
{
    /// <summary><see cref="NativeCache"/>, within a byte budget.</summary>
    Native,

    /// <summary>BitFaster.Caching's <c>ConcurrentLru&lt;string, byte[]&gt;</c>, with a capacity in entries.</summary>
    BitFasterLru,

    /// <summary>BitFaster.Caching's <c>ConcurrentLfu&lt;string, byte[]&gt;</c>, with a capacity in entries.</summary>
    BitFasterLfu,

    /// <summary>Microsoft.Extensions.Caching.Memory's <c>MemoryCache</c> with a <c>SizeLimit</c>, each entry's size its key and value bytes.</summary>
    MemoryCache,

    /// <summary><c>ConcurrentDictionary&lt;string, byte[]&gt;</c>: no eviction, no expiry; the ceiling.</summary>
    Dictionary,
}
