using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench cache</c>: NativeCache against BitFaster's caches, MemoryCache and a ConcurrentDictionary.</summary>
[Verb("cache", HelpText = "Concurrent caches side by side, each side in its own process: native (NativeCache, a byte budget), bitfaster-lru and bitfaster-lfu (BitFaster.Caching's ConcurrentLru and ConcurrentLfu of string to byte[], an entry count), memorycache (MemoryCache with SizeLimit, each entry's size its key and value bytes), dictionary (ConcurrentDictionary, no eviction: the ceiling). Workloads: BitFaster's own shapes (zipf-read, read-write), the server shape (string keys of 16-40 bytes, log-normal values of median 200 B and p99 4 KiB: ycsb-a, ycsb-b, ycsb-c at Zipf 0.99, a one-pass scan, an expiry churn). Reports ops/s, sampled latency, GC collections and pauses, memory, hit ratios and allocations per operation; every read checks its value.")]
public sealed class CacheOptions : OptionsOnlyVerb
{
    /// <summary>The server shape's keys.</summary>
    [Option("entries", Default = 5_000_000, HelpText = "The server shape's keys (1,000 to 100,000,000).")]
    public int Entries { get; set; } = 5_000_000;

    /// <summary>The share of the keys the caches are sized for.</summary>
    [Option("cache-percent", Default = 50, HelpText = "The share of the server shape's keys the caches are sized to hold, in percent (1 to 100).")]
    public int CachePercent { get; set; } = 50;

    /// <summary>Operations per timed run.</summary>
    [Option("ops", Default = 2_000_000, HelpText = "Operations per timed run, shared among its threads (at least 1).")]
    public int Operations { get; set; } = 2_000_000;

    /// <summary>The thread counts.</summary>
    [Option("threads", Default = "1,2,4", HelpText = "The thread counts each workload runs at, comma-separated (1 to 64 each).")]
    public string Threads { get; set; } = "1,2,4";

    /// <summary>The workloads.</summary>
    [Option("workload", HelpText = "The workloads, comma-separated: zipf-read, read-write, ycsb-a, ycsb-b, ycsb-c, scan, expiry (default: all).")]
    public string? Workloads { get; set; }

    /// <summary>The sides.</summary>
    [Option("side", HelpText = "The sides, comma-separated: native, bitfaster-lru, bitfaster-lfu, memorycache, dictionary (default: all).")]
    public string? Sides { get; set; }

    /// <summary>The expiry phase's length.</summary>
    [Option("expiry-seconds", Default = 6.0, HelpText = "How long the expiry phase runs, in seconds (0.1 to 3600); it then waits 5 s more for the last lifetimes to pass.")]
    public double ExpirySeconds { get; set; } = 6.0;

    /// <summary>Run every side in this process.</summary>
    [Option("in-process", HelpText = "Run the sides one after another in this process (peak RSS and the collections are then cumulative, not each side's own).")]
    public bool InProcess { get; set; }

    /// <summary>Where to write the chart, if anywhere.</summary>
    [Option("plot", HelpText = "Also write a chart of each side's throughput and longest GC pause to this .svg or .png file.")]
    public string? Plot { get; set; }

    /// <summary>Internal: this process is a child running one side.</summary>
    [Option("child", Hidden = true)]
    public bool Child { get; set; }
}
