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

        Start();
        var summaries = new List<Summary>();
        foreach (Type type in benchmarkTypes)
        {
            summaries.Add(BenchmarkRunner.Run(type, config));
        }

        return Outcome(summaries);
    }

    /// <summary>Forgets the result checks made so far, before a run.</summary>
    public static void Start()
    {
        ResultChecks.Clear();
        ResultCheckCollector.Instance.Clear();
    }

    /// <summary>
    /// What the run that produced <paramref name="summaries"/> (under a configuration from
    /// <see cref="JemBenchConfig.Create"/>) amounts to: every benchmark must have run, made at least
    /// one result check (in this process or in its own) and passed every check.
    /// </summary>
    public static SuiteOutcome Outcome(IReadOnlyList<Summary> summaries)
    {
        ArgumentNullException.ThrowIfNull(summaries);
        var failures = new List<string>();
        foreach (Summary summary in summaries)
        {
            failures.AddRange(Failures(summary));
        }

        IReadOnlyList<ResultCheck> checks = ResultCheckCollector.Instance.All;
        failures.AddRange(checks.Where(check => !check.Passed).Select(check => $"wrong result: {check.Benchmark}: {check.Description}"));
        SuiteOutcome outcome = new(summaries, checks, failures);
        ResultCheckCollector.Instance.Clear();
        return outcome;
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

            if (ResultCheckCollector.Instance.ChecksOf(benchmark).Count == 0)
            {
                // A benchmark whose result was never checked proves nothing; in its own process, a
                // check that was made but not received is just as unknown.
                yield return $"no result check was made: {benchmark.DisplayInfo}";
            }
        }
    }
}
