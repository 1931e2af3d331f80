using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary>The options of the verbs that benchmark a native structure against managed arrays.</summary>
public abstract class StructureOptions : SuiteOptions
{
    /// <summary>The arithmetic benchmarks.</summary>
    [Option("math", HelpText = "Benchmark SIMD arithmetic over every element (VectorMultiply, VectorSum) against the best managed code.")]
    public bool Math { get; set; }
}
