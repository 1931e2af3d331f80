using System.Collections.Concurrent;
using BenchmarkDotNet.EventProcessors;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Attributes result checks to the benchmark that made them, in whichever process it ran: the
/// checks recorded in this process while the benchmark ran (in-process suites), and the lines its
/// own process appended to the file named in its job's environment (out-of-process jobs, see
/// <see cref="ResultChecks.FileVariable"/>). Added to every jembench configuration; the runner then
/// fails a benchmark whose check failed and a benchmark that made no check at all.
/// </summary>
public sealed class ResultCheckCollector : EventProcessor
{
    private readonly ConcurrentDictionary<BenchmarkCase, List<ResultCheck>> _byCase = new();
    private readonly ConcurrentDictionary<string, long> _fileOffsets = new();
    private int _inProcessStart;

    private ResultCheckCollector()
    {
    }

    /// <summary>The one instance added to every configuration.</summary>
    public static ResultCheckCollector Instance { get; } = new();

    /// <summary>Every check collected since <see cref="Clear"/>, benchmark by benchmark.</summary>
    public IReadOnlyList<ResultCheck> All => [.. _byCase.Values.SelectMany(checks => checks)];

    /// <summary>The checks <paramref name="benchmarkCase"/> made (none if it did not run).</summary>
    public IReadOnlyList<ResultCheck> ChecksOf(BenchmarkCase benchmarkCase) =>
        _byCase.TryGetValue(benchmarkCase, out List<ResultCheck>? checks) ? checks : [];

    /// <summary>Forgets everything collected and deletes the out-of-process check files read so far.</summary>
    public void Clear()
    {
        foreach (string path in _fileOffsets.Keys)
        {
            try
            {
                File.Delete(path);
            }
            catch (IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
        }

        _byCase.Clear();
        _fileOffsets.Clear();
    }

    /// <inheritdoc/>
    public override void OnStartRunBenchmark(BenchmarkCase benchmarkCase) => _inProcessStart = ResultChecks.Count;

    /// <inheritdoc/>
    public override void OnEndRunBenchmark(BenchmarkCase benchmarkCase, BenchmarkReport report)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        var checks = new List<ResultCheck>(ResultChecks.All.Skip(_inProcessStart));
        if (CheckFile(benchmarkCase) is string path)
        {
            long offset = _fileOffsets.GetValueOrDefault(path);
            (IReadOnlyList<ResultCheck> fromChild, long next) = ResultChecks.ReadFile(path, offset);
            _fileOffsets[path] = next;
            checks.AddRange(fromChild);
        }

        _byCase[benchmarkCase] = checks;
    }

    /// <summary>The file the job of <paramref name="benchmarkCase"/> appends its checks to, if it runs in its own process.</summary>
    public static string? CheckFile(BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        return benchmarkCase.Job.Environment.EnvironmentVariables?
            .FirstOrDefault(v => v.Key == ResultChecks.FileVariable)?.Value;
    }
}
