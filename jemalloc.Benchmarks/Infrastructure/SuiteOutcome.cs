using BenchmarkDotNet.Reports;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>What a suite run produced: BenchmarkDotNet's summaries and whether every result was right.</summary>
/// <param name="Summaries">One summary per benchmark class run.</param>
/// <param name="Checks">The result checks made in this process.</param>
/// <param name="Failures">Benchmarks that failed or were not measured, and wrong results, each as a message.</param>
public sealed record SuiteOutcome(IReadOnlyList<Summary> Summaries, IReadOnlyList<ResultCheck> Checks, IReadOnlyList<string> Failures)
{
    /// <summary>Whether every benchmark ran and every check passed.</summary>
    public bool Succeeded => Failures.Count == 0;
}
