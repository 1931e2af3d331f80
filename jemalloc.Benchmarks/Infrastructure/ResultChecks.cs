using System.Collections.Concurrent;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Collects the result checks the suites make after each run, so that the runner can fail loudly
/// on a wrong answer. A failing check also throws, which BenchmarkDotNet reports for the benchmark.
/// </summary>
public static class ResultChecks
{
    private static readonly ConcurrentQueue<ResultCheck> Records = new();

    /// <summary>The checks made so far in this process.</summary>
    public static IReadOnlyList<ResultCheck> All => [.. Records];

    /// <summary>Forgets the checks made so far.</summary>
    public static void Clear() => Records.Clear();

    /// <summary>Records a check; throws when it failed.</summary>
    /// <exception cref="BenchmarkVerificationException"><paramref name="passed"/> is false.</exception>
    public static void Check(string benchmark, bool passed, string description)
    {
        Records.Enqueue(new ResultCheck(benchmark, description, passed));
        if (!passed)
        {
            throw new BenchmarkVerificationException($"{benchmark}: wrong result: {description}");
        }
    }

    /// <summary>Records that two values are equal; throws when they are not.</summary>
    /// <exception cref="BenchmarkVerificationException">They differ.</exception>
    public static void Equal<T>(string benchmark, T expected, T actual, string what)
        => Check(benchmark, EqualityComparer<T>.Default.Equals(expected, actual), $"{what}: expected {expected}, got {actual}");
}
