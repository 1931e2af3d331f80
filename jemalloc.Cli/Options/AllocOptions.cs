using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench alloc</c>: small-object allocation throughput.</summary>
[Verb("alloc", HelpText = "Small-object throughput: N allocations of 64..4096 bytes, then all freed; jemalloc (default and tuned thread cache) against C malloc, new byte[] and ArrayPool. Sizes: allocations per operation.")]
public sealed class AllocOptions : RunOptions
{
    /// <summary>Run in this process.</summary>
    [Option("in-process", HelpText = "Run in this process under its own jemalloc options only, instead of one process per jemalloc configuration.")]
    public bool InProcess { get; set; }

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "counts", HelpText = "Allocations per operation (default 2048).")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
