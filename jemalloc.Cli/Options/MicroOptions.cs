using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench micro</c>: the micro-benchmarks of the data structures.</summary>
[Verb("micro", HelpText = "The data structures' micro-benchmarks (namespace jemalloc.Benchmarks.Micro).")]
public sealed class MicroOptions : RunOptions
{
    /// <summary>Which benchmarks to run.</summary>
    /// <remarks>One text value, space-separated, rather than a sequence option, so the patterns given after it stay positional.</remarks>
    [Option("filter", HelpText = "Glob patterns on the full benchmark name, space-separated in one value, e.g. *FixedBuffer* (default: all).")]
    public string? Filter { get; set; }

    /// <summary>Which benchmarks to run, given without <c>--filter</c>: the same glob patterns.</summary>
    [Value(0, MetaName = "patterns", HelpText = "Glob patterns, as --filter takes them.")]
    public IEnumerable<string> Patterns { get; set; } = [];

    /// <summary>The JIT mode to measure in: <c>tiered</c> (the default) or <c>full</c>; see <c>MicroJit</c>.</summary>
    [Option("jit", HelpText = "The JIT mode to measure in: tiered (default: tiered compilation with dynamic PGO, what a .NET application runs) or full (every method fully optimized at its first call, as jembench's other suites run).")]
    public string? Jit { get; set; }

    /// <summary>List instead of running.</summary>
    [Option("list", HelpText = "List the micro-benchmark classes with a benchmark the patterns match, instead of running them.")]
    public bool List { get; set; }
}
