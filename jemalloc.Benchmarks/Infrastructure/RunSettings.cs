namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>How a suite is run: the run strategy, the number of iterations and where results go.</summary>
public sealed record RunSettings
{
    /// <summary>Measure cold starts: no pilot or warm-up, each iteration one operation (first-call costs included).</summary>
    public bool ColdStart { get; init; }

    /// <summary>Run each benchmark exactly once (one cold operation, no warm-up).</summary>
    public bool Once { get; init; }

    /// <summary>A smoke run: like <see cref="Once"/>, and the console log is kept short.</summary>
    public bool Quick { get; init; }

    /// <summary>The number of measured iterations, or null for BenchmarkDotNet's choice.</summary>
    public int? TargetCount { get; init; }

    /// <summary>The jemalloc configuration (<c>malloc_conf</c>) the benchmarks run under, or null for the default.</summary>
    public string? Conf { get; init; }

    /// <summary>The result files to write.</summary>
    public ExportFormats Exporters { get; init; } = ExportFormats.All;

    /// <summary>The folder for result files and logs, or null for BenchmarkDotNet's default.</summary>
    public string? ArtifactsPath { get; init; }

    /// <summary>
    /// Run the suites that normally use one process per configuration (<c>alloc</c>) inside this
    /// process instead, under the configuration this process was started with.
    /// </summary>
    public bool ForceInProcess { get; init; }
}
