using BenchmarkDotNet.Columns;
using Perfolizer.Metrology;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Order;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Builds the BenchmarkDotNet configuration of a jembench run.</summary>
/// <remarks>
/// <para>
/// The suites run in this process (<see cref="InProcessEmitToolchain"/>), as the 2018 jembench did.
/// Reasons: the memory a suite may use is checked and reserved by the process that runs it, so a
/// multi-gigabyte managed array and a multi-gigabyte native one are never alive together (each
/// benchmark's setup allocates only its own structure and its cleanup frees it and collects); the
/// native library and its configuration are the ones this process loaded; jemalloc's counters can be
/// read directly; and no project has to be generated and compiled, so jembench also runs where its
/// sources are not. The costs are handled explicitly: a forced full garbage collection between
/// iterations (BenchmarkDotNet's default), peak resident memory reset before each benchmark, and
/// the jemalloc configuration fixed for the whole run (set before the library loads).
/// </para>
/// <para>
/// Only a suite that must compare several jemalloc configurations (<c>alloc</c>) needs one process
/// per configuration, because jemalloc reads its options once, when it loads: those jobs run out of
/// process with <c>JE_MALLOC_CONF</c> in their environment.
/// </para>
/// </remarks>
public static class JemBenchConfig
{
    /// <summary>How long one in-process benchmark may run before it is abandoned.</summary>
    private static readonly TimeSpan InProcessTimeout = TimeSpan.FromHours(12);

    /// <summary>How long building the generated project of out-of-process jobs may take.</summary>
    private static readonly TimeSpan OutOfProcessBuildTimeout = TimeSpan.FromMinutes(15);

    /// <summary>The job all in-process suites use, shaped by <paramref name="settings"/>.</summary>
    public static Job InProcessJob(RunSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        // Arrays over 2 GB are always allowed on .NET Core; the setting only documents it in the results.
        return Shape(Job.Default.WithGcAllowVeryLargeObjects(true), settings)
            .WithToolchain(new InProcessEmitToolchain(InProcessTimeout, logOutput: !settings.Quick))
            .WithId("JemBenchmark");
    }

    /// <summary>
    /// A job that runs in its own process with <paramref name="conf"/> as jemalloc's configuration
    /// (none when null), named <paramref name="id"/>.
    /// </summary>
    public static Job OutOfProcessJob(RunSettings settings, string id, string? conf)
    {
        ArgumentNullException.ThrowIfNull(settings);
        // The child records its result checks in a file only this job uses; the parent reads it back
        // after each benchmark (ResultCheckCollector). The hidden test switch is passed on explicitly.
        string checks = Path.Combine(Path.GetTempPath(), $"jembench-checks-{Environment.ProcessId}-{Guid.NewGuid():N}-{id}.tsv");
        var variables = new List<EnvironmentVariable> { new(ResultChecks.FileVariable, checks) };
        if (conf is not null)
        {
            variables.Add(new EnvironmentVariable(Jem.ConfigurationVariable, conf));
        }

        if (BrokenResultSwitch.Setting is string broken)
        {
            variables.Add(new EnvironmentVariable(BrokenResultSwitch.Variable, broken));
        }

        return Shape(Job.Default, settings).WithId(id).WithEnvironmentVariables([.. variables]);
    }

    /// <summary>The configuration for <paramref name="jobs"/>, running only benchmarks in one of <paramref name="categories"/> (all when empty).</summary>
    public static IConfig Create(RunSettings settings, IReadOnlyCollection<string> categories, params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(categories);
        ArgumentNullException.ThrowIfNull(jobs);
        ManualConfig config = ManualConfig.CreateEmpty()
            .AddJob(jobs)
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddColumn(CategoriesColumn.Default, PageFaultsColumn.Instance)
            .AddColumn([.. FragmentationColumns.All])
            .AddColumn(PerElementColumn.NanosecondsPerElement, PerElementColumn.GigabytesPerSecond)
            .AddColumn(AllocationRateColumn.Instance, CoresColumn.Instance)
            .AddLogger(ConsoleLogger.Default)
            .AddDiagnoser(MemoryDiagnoser.Default, ResourceDiagnoser.Instance)
            .AddEventProcessor(ResultCheckCollector.Instance)
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray())
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .AddLogicalGroupRules(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)
            .WithOrderer(new DefaultOrderer(SummaryOrderPolicy.Declared, MethodOrderPolicy.Declared))
            .WithSummaryStyle(SummaryStyle.Default.WithMaxParameterColumnWidth(20).WithSizeUnit(SizeUnit.KB))
            .WithOption(ConfigOptions.DisableLogFile, settings.Quick)
            // Out-of-process jobs build a generated project first; on a busy machine that takes longer than BenchmarkDotNet's default 2 minutes.
            .WithBuildTimeout(OutOfProcessBuildTimeout);
        if (categories.Count > 0)
        {
            config = config.AddFilter(new AnyCategoriesFilter([.. categories]));
        }

        if (settings.Exporters.HasFlag(ExportFormats.Markdown))
        {
            config = config.AddExporter(MarkdownExporter.GitHub);
        }

        if (settings.Exporters.HasFlag(ExportFormats.Csv))
        {
            config = config.AddExporter(CsvExporter.Default);
        }

        if (settings.Exporters.HasFlag(ExportFormats.Html))
        {
            config = config.AddExporter(HtmlExporter.Default);
        }

        if (settings.ArtifactsPath is not null)
        {
            config = config.WithArtifactsPath(settings.ArtifactsPath);
        }

        return config;
    }

    private static Job Shape(Job job, RunSettings settings)
    {
        job = job.WithGcServer(false).WithGcConcurrent(false).WithGcForce(true);
        if (settings.Once || settings.Quick)
        {
            return job.WithStrategy(RunStrategy.ColdStart).WithLaunchCount(1).WithWarmupCount(0).WithIterationCount(1);
        }

        if (settings.ColdStart)
        {
            job = job.WithStrategy(RunStrategy.ColdStart);
        }

        if (settings.TargetCount is int count)
        {
            job = job.WithIterationCount(count);
        }

        return job;
    }
}
