namespace jemalloc.Cli.Caching;

/// <summary>The workloads' names, as --workload takes them.</summary>
public static class CacheWorkloads
{
    /// <summary>The name of <paramref name="workload"/>.</summary>
    public static string Name(CacheWorkload workload) => workload switch
    {
        CacheWorkload.ZipfRead => "zipf-read",
        CacheWorkload.ReadWrite => "read-write",
        CacheWorkload.YcsbA => "ycsb-a",
        CacheWorkload.YcsbB => "ycsb-b",
        CacheWorkload.YcsbC => "ycsb-c",
        CacheWorkload.Scan => "scan",
        _ => "expiry",
    };

    /// <summary>The workload named <paramref name="name"/>, or null.</summary>
    public static CacheWorkload? Parse(string name) => Enum.GetValues<CacheWorkload>().Select(w => (CacheWorkload?)w).FirstOrDefault(w => Name(w!.Value) == name);

    /// <summary>What the workload is, for the tables' headings.</summary>
    public static string Describe(CacheWorkload workload) => workload switch
    {
        CacheWorkload.ZipfRead => $"BitFaster's read shape: {CacheSettings.ZipfReadKeys} keys, Zipf s = {CacheSettings.BitFasterExponent}, the cache holds them all, 24-64-byte values",
        CacheWorkload.ReadWrite => $"BitFaster's read-write shape: {CacheSettings.ReadWriteKeys:N0} keys, Zipf s = {CacheSettings.BitFasterExponent}, the cache holds 10% of them, a miss writes",
        CacheWorkload.YcsbA => "YCSB A: 50% reads, 50% updates, Zipf 0.99 (a read miss writes)",
        CacheWorkload.YcsbB => "YCSB B: 95% reads, 5% updates, Zipf 0.99",
        CacheWorkload.YcsbC => "YCSB C: reads only, Zipf 0.99",
        CacheWorkload.Scan => "one pass, on one thread, over new keys as many as the cache holds; hot-set hit ratio before and after",
        _ => "a fresh cache, 30% of the keys written with lifetimes of 1-5 s, YCSB B's mix for the phase's seconds",
    };
}
