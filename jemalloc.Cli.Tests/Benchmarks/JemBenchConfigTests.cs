using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Tests.Benchmarks;

public class JemBenchConfigTests
{
    [Fact]
    public void The_in_process_job_uses_the_in_process_toolchain()
    {
        Job job = JemBenchConfig.InProcessJob(new RunSettings());
        Assert.IsType<InProcessEmitToolchain>(job.Infrastructure.Toolchain);
        Assert.True(job.Environment.Gc.AllowVeryLargeObjects);
        Assert.False(job.Environment.Gc.Server);
    }

    [Fact]
    public void Once_and_quick_run_one_cold_iteration()
    {
        foreach (RunSettings settings in new[] { new RunSettings { Once = true }, new RunSettings { Quick = true } })
        {
            Job job = JemBenchConfig.InProcessJob(settings);
            Assert.Equal(RunStrategy.ColdStart, job.Run.RunStrategy);
            Assert.Equal(1, job.Run.IterationCount);
            Assert.Equal(0, job.Run.WarmupCount);
            Assert.Equal(1, job.Run.LaunchCount);
        }
    }

    [Fact]
    public void Cold_start_and_target_count_shape_the_job()
    {
        Job job = JemBenchConfig.InProcessJob(new RunSettings { ColdStart = true, TargetCount = 3 });
        Assert.Equal(RunStrategy.ColdStart, job.Run.RunStrategy);
        Assert.Equal(3, job.Run.IterationCount);
    }

    [Fact]
    public void An_out_of_process_job_carries_its_jemalloc_configuration_in_the_environment()
    {
        Job job = JemBenchConfig.OutOfProcessJob(new RunSettings(), "tuned", AllocTuning.TunedThreadCache);
        EnvironmentVariable variable = Assert.Single(job.Environment.EnvironmentVariables!);
        Assert.Equal("JE_MALLOC_CONF", variable.Key);
        Assert.Equal("tcache_nslots_small_max:2000,tcache_nslots_small_min:1000", variable.Value);
        Assert.Equal("tuned", job.Id);
        Assert.Null(job.Infrastructure.Toolchain);
    }

    [Fact]
    public void An_out_of_process_job_without_configuration_has_no_environment_variables()
    {
        Job job = JemBenchConfig.OutOfProcessJob(new RunSettings(), "default", null);
        Assert.True(job.Environment.EnvironmentVariables is null || job.Environment.EnvironmentVariables.Count == 0);
    }

    [Fact]
    public void The_configuration_has_the_resource_columns_and_the_chosen_exporters()
    {
        IConfig config = JemBenchConfig.Create(new RunSettings { Exporters = ExportFormats.Csv, ArtifactsPath = "/tmp/x" }, [Categories.Fill], JemBenchConfig.InProcessJob(new RunSettings()));
        Assert.Contains(ResourceDiagnoser.Instance, config.GetDiagnosers());
        IExporter exporter = Assert.Single(config.GetExporters());
        Assert.IsType<CsvExporter>(exporter);
        Assert.Equal("/tmp/x", config.ArtifactsPath);
        Assert.NotEmpty(config.GetFilters());
    }

    [Fact]
    public void No_categories_means_no_filter()
    {
        IConfig config = JemBenchConfig.Create(new RunSettings { Exporters = ExportFormats.None }, [], JemBenchConfig.InProcessJob(new RunSettings()));
        Assert.Empty(config.GetFilters());
        Assert.Empty(config.GetExporters());
    }

    [Theory]
    [InlineData("narenas:2")]
    [InlineData("tcache_nslots_small_max:2000,tcache_nslots_small_min:1000")]
    [InlineData("dirty_decay_ms:-1,thp:always")]
    public void Well_formed_configurations_are_accepted(string conf) => JemConfiguration.Validate(conf);

    [Theory]
    [InlineData("")]
    [InlineData("narenas")]
    [InlineData("narenas:2,,thp:always")]
    [InlineData("narenas:2 thp:always")]
    [InlineData("abort_conf:true")]
    public void Malformed_or_dangerous_configurations_are_refused(string conf) =>
        Assert.Throws<ArgumentException>(() => JemConfiguration.Validate(conf));
}
