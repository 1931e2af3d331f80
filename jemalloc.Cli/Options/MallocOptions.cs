using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench malloc</c>: raw jemalloc memory against managed arrays.</summary>
[Verb("malloc", HelpText = "Raw jemalloc allocations against managed arrays: --create, --fill (sizes: element counts), --fragment (sizes: rounds of the pattern).")]
public sealed class MallocOptions : SuiteOptions
{
    /// <summary>The fragmentation patterns.</summary>
    [Option("fragment", HelpText = "Benchmark allocation patterns that fragment the Large Object Heap and jemalloc, with their non-fragmenting controls.")]
    public bool Fragment { get; set; }
}
