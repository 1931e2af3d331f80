namespace jemalloc.Cli.Caching;

/// <summary>A workload of <c>jembench cache</c>.</summary>
public enum CacheWorkload
{
    /// <summary>BitFaster's read shape: 500 keys, Zipf s = 0.86, a cache that holds them all.</summary>
    ZipfRead,

    /// <summary>BitFaster's read-write shape: Zipf s = 0.86 over a cache that holds 10% of the keys (a miss writes).</summary>
    ReadWrite,

    /// <summary>YCSB A on the server shape: 50% reads, 50% updates, Zipf 0.99.</summary>
    YcsbA,

    /// <summary>YCSB B on the server shape: 95% reads, 5% updates, Zipf 0.99.</summary>
    YcsbB,

    /// <summary>YCSB C on the server shape: reads only, Zipf 0.99.</summary>
    YcsbC,

    /// <summary>A one-pass scan of new keys as many as the cache holds, with the hot set's hit ratio before and after.</summary>
    Scan,

    /// <summary>YCSB B's mix on a fresh cache where 30% of the keys are written with lifetimes of 1 to 5 seconds.</summary>
    Expiry,
}
