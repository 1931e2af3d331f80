using System.Collections.Concurrent;
using BenchmarkDotNet.Analysers;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using BenchmarkDotNet.Validators;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Adds three measurements per benchmark, taken around BenchmarkDotNet's actual (measured) run:
/// the change of the bytes allocated by jemalloc (<c>stats.allocated</c>: memory a benchmark keeps or
/// leaks), the process's peak resident memory, and page faults (shown per operation by
/// <see cref="PageFaultsColumn"/>).
/// </summary>
/// <remarks>
/// The measurements are taken by the host when the benchmark process signals the start and end of
/// the actual run, with the benchmark paused, so nothing is added to the measured time. Peak
/// resident memory is reset at the start (<c>/proc/&lt;pid&gt;/clear_refs</c>), so each benchmark
/// shows its own peak even when several run in one process. The jemalloc counter can only be read
/// inside the benchmark's own process: for benchmarks run out of process it is not available.
/// </remarks>
public sealed class ResourceDiagnoser : IDiagnoser
{
    private readonly ConcurrentDictionary<BenchmarkCase, Sample> _before = new();
    private readonly ConcurrentDictionary<BenchmarkCase, Sample> _after = new();
    private readonly ConcurrentDictionary<BenchmarkCase, long> _pageFaults = new();

    /// <summary>The one instance added to every configuration.</summary>
    public static ResourceDiagnoser Instance { get; } = new();

    private ResourceDiagnoser()
    {
    }

    /// <inheritdoc/>
    public IEnumerable<string> Ids => ["JemResources"];

    /// <inheritdoc/>
    public IEnumerable<IExporter> Exporters => [];

    /// <inheritdoc/>
    public IEnumerable<IAnalyser> Analysers => [];

    /// <inheritdoc/>
    public RunMode GetRunMode(BenchmarkCase benchmarkCase) => RunMode.NoOverhead;

    /// <inheritdoc/>
    public void Handle(HostSignal signal, DiagnoserActionParameters parameters)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        if (signal is not (HostSignal.BeforeActualRun or HostSignal.AfterActualRun))
        {
            return;
        }

        bool inProcess = parameters.BenchmarkCase.Job.Infrastructure.Toolchain is InProcessEmitToolchain;
        int? processId = inProcess ? Environment.ProcessId : parameters.Process?.Id;
        if (processId is not int pid)
        {
            return;
        }

        if (signal == HostSignal.BeforeActualRun)
        {
            ProcessMemory.ResetPeakResident(pid);
            _before[parameters.BenchmarkCase] = Sample.Take(pid, inProcess);
        }
        else
        {
            _after[parameters.BenchmarkCase] = Sample.Take(pid, inProcess);
        }
    }

    /// <inheritdoc/>
    public IEnumerable<Metric> ProcessResults(DiagnoserResults results)
    {
        ArgumentNullException.ThrowIfNull(results);
        if (!_before.TryRemove(results.BenchmarkCase, out Sample before) || !_after.TryRemove(results.BenchmarkCase, out Sample after))
        {
            yield break;
        }

        if (before.JemLive is ulong liveBefore && after.JemLive is ulong liveAfter)
        {
            yield return new Metric(ResourceMetric.JemLiveChange, (double)(long)(liveAfter - liveBefore));
        }

        if (after.PeakResident is long peak)
        {
            yield return new Metric(ResourceMetric.PeakResident, peak);
        }

        if (before.Faults is var (minorBefore, majorBefore) && after.Faults is var (minorAfter, majorAfter))
        {
            // Kept as a total: DiagnoserResults.TotalOperations also counts the jitting, pilot and
            // warm-up operations, which ran before the first sample, so the per-operation figure is
            // made by PageFaultsColumn from the actual iterations' operation count.
            _pageFaults[results.BenchmarkCase] = minorAfter - minorBefore + majorAfter - majorBefore;
        }
    }

    /// <summary>The page faults counted over the actual run of <paramref name="benchmarkCase"/>.</summary>
    internal bool TryGetPageFaults(BenchmarkCase benchmarkCase, out long faults) => _pageFaults.TryGetValue(benchmarkCase, out faults);

    /// <inheritdoc/>
    public void DisplayResults(ILogger logger)
    {
    }

    /// <inheritdoc/>
    public IEnumerable<ValidationError> Validate(ValidationParameters validationParameters) => [];

    private readonly record struct Sample(ulong? JemLive, long? PeakResident, (long Minor, long Major)? Faults)
    {
        public static Sample Take(int processId, bool inProcess) => new(
            inProcess ? JemControl.LiveBytes() : null,
            ProcessMemory.PeakResidentBytes(processId),
            ProcessMemory.PageFaults(processId));
    }
}
