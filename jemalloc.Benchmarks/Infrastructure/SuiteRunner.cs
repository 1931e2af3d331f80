using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Runs benchmark classes and collects whether each benchmark ran and gave the right answer.</summary>
public static class SuiteRunner
{
    /// <summary>Runs <paramref name="benchmarkTypes"/> one after the other under <paramref name="config"/>.</summary>
    /// <exception cref="ArgumentException">No benchmark type is given.</exception>
    public static SuiteOutcome Run(IConfig config, params Type[] benchmarkTypes)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(benchmarkTypes);
        if (benchmarkTypes.Length == 0)
        {
            throw new ArgumentException("At least one benchmark class is needed.", nameof(benchmarkTypes));
        }

        ResultChecks.Clear();
        var summaries = new List<Summary>();
        var failures = new List<string>();
        foreach (Type type in benchmarkTypes)
        {
            Summary summary = BenchmarkRunner.Run(type, config);
            summaries.Add(summary);
            failures.AddRange(Failures(summary));
        }

        IReadOnlyList<ResultCheck> checks = ResultChecks.All;
        failures.AddRange(checks.Where(check => !check.Passed).Select(check => $"wrong result: {check.Benchmark}: {check.Description}"));
        return new SuiteOutcome(summaries, checks, failures);
    }

    private static IEnumerable<string> Failures(Summary summary)
    {
        if (summary.HasCriticalValidationErrors)
        {
            foreach (var error in summary.ValidationErrors.Where(e => e.IsCritical))
            {
                yield return $"invalid benchmark: {error.Message}";
            }
        }

        foreach (BenchmarkCase benchmark in summary.BenchmarksCases)
        {
            BenchmarkReport? report = summary[benchmark];
            if (report is null || !report.Success || report.ResultStatistics is null)
            {
                yield return $"failed or not measured: {benchmark.DisplayInfo}";
            }
        }
    }
}
