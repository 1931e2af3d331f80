using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench alloc</c>: small-object allocation throughput.</summary>
[Verb("alloc", HelpText = "Small-object throughput: N allocations of 64..4096 bytes, then all freed; jemalloc (default and tuned thread cache) against C malloc, new byte[] and ArrayPool. Sizes: allocations per operation.")]
public sealed class AllocOptions : RunOptions
{
    /// <summary>Run in this process.</summary>
    [Option("in-process", HelpText = "Run in this process under its own jemalloc options only, instead of one process per jemalloc configuration.")]
    public bool InProcess { get; set; }

    /// <summary>The thread counts of the multi-thread suite; empty for the single-thread suite.</summary>
    [Option("threads", Separator = ',', HelpText = "Run the multi-thread suite instead, once per thread count, e.g. --threads 1,2,4: each thread makes the counts' allocations, freed on the same thread and, from 2 threads, on the next thread in a ring (producer-consumer).")]
    public IEnumerable<int> Threads { get; set; } = [];

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "counts", HelpText = "Allocations per operation, per thread with --threads (default 2048).")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
