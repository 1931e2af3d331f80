using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench vector</c>: SIMD kernels over native and managed memory.</summary>
[Verb("vector", HelpText = "SIMD kernels (a Mandelbrot plot) over native and managed memory, single- and multi-threaded. Sizes: plot widths in pixels.")]
public sealed class VectorOptions : RunOptions
{
    /// <summary>Single precision.</summary>
    [Option('f', "float", HelpText = "Compute in single precision.")]
    public bool SinglePrecision { get; set; }

    /// <summary>Double precision.</summary>
    [Option('d', "double", HelpText = "Compute in double precision.")]
    public bool DoublePrecision { get; set; }

    /// <summary>The Mandelbrot kernel.</summary>
    [Option("mandel", HelpText = "Benchmark the Mandelbrot kernel (the default).")]
    public bool Mandelbrot { get; set; }

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "widths", HelpText = "Plot widths in pixels (the height is two thirds of the width).")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
