using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench micro</c>: the micro-benchmarks of the data structures.</summary>
[Verb("micro", HelpText = "The data structures' micro-benchmarks (namespace jemalloc.Benchmarks.Micro).")]
public sealed class MicroOptions : RunOptions
{
    /// <summary>Which benchmarks to run.</summary>
    [Option("filter", Separator = ' ', HelpText = "Glob patterns on the full benchmark name, e.g. *FixedBuffer* (default: all).")]
    public IEnumerable<string> Filter { get; set; } = [];

    /// <summary>List instead of running.</summary>
    [Option("list", HelpText = "List the micro-benchmarks instead of running them.")]
    public bool List { get; set; }
}
