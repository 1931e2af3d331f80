namespace jemalloc.Cli.Caching;

/// <summary>What a run of <c>jembench cache</c> does; every process of the run gets the same.</summary>
/// <param name="Entries">The server shape's keys.</param>
/// <param name="CachePercent">The share of the server shape's keys the caches are sized to hold, in percent.</param>
/// <param name="Operations">Operations per timed run (shared among its threads).</param>
/// <param name="Threads">The thread counts each workload runs at.</param>
/// <param name="Workloads">The workloads, in the order of <see cref="CacheWorkload"/>.</param>
/// <param name="ExpirySeconds">How long the expiry phase runs.</param>
public sealed record CacheSettings(int Entries, int CachePercent, int Operations, int[] Threads, CacheWorkload[] Workloads, double ExpirySeconds)
{
    /// <summary>BitFaster's read shape's keys (its own benchmark's).</summary>
    public const int ZipfReadKeys = 500;

    /// <summary>
    /// BitFaster's read-write shape's keys: its 500 scaled up so that the cache of 10% of them needs more than the
    /// native cache's smallest budget (1 MiB) at 24-64-byte values.
    /// </summary>
    public const int ReadWriteKeys = 200_000;

    /// <summary>BitFaster's shapes' Zipf exponent.</summary>
    public const double BitFasterExponent = 0.86;

    /// <summary>The server shape's Zipf exponent (YCSB's).</summary>
    public const double ServerExponent = 0.99;

    /// <summary>The server shape's cache capacity in entries.</summary>
    public int ServerCapacityEntries => (int)Math.Max(1, (long)Entries * CachePercent / 100);

    /// <summary>Whether a workload of the server shape runs.</summary>
    public bool RunsServerShape => Workloads.Any(w => w >= CacheWorkload.YcsbA);

    /// <summary>
    /// The thread count of the scan and expiry phases, which run once: the largest given that the machine's cores
    /// can run at once, else the smallest given.
    /// </summary>
    public int OnceThreads => Threads.Where(t => t <= Environment.ProcessorCount).DefaultIfEmpty(Threads.Min()).Max();
}
