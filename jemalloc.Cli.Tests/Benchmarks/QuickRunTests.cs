using System.Text.Json;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>Every verb, end to end, in quick mode with tiny sizes, in this process; its result checks must pass.</summary>
[Collection(JembenchRuns.Name)]
public sealed class QuickRunTests : IDisposable
{
    private readonly string _artifacts = Path.Combine(Path.GetTempPath(), "jembench-tests-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_artifacts))
        {
            Directory.Delete(_artifacts, recursive: true);
        }
    }

    private Jembench.Result RunQuick(params string[] args)
    {
        Jembench.Result result = Jembench.Run([.. args, "--quick", "--artifacts", _artifacts]);
        Assert.True(result.ExitCode == Program.ExitSuccess, $"exit code {result.ExitCode}:\n{result.All}");
        Assert.Contains("every benchmark ran", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain(ResultChecks.All, check => !check.Passed);
        return result;
    }

    private static void AssertChecked(string benchmarkPrefix, int atLeast) =>
        Assert.True(ResultChecks.All.Count(c => c.Passed && c.Benchmark.StartsWith(benchmarkPrefix, StringComparison.Ordinal)) >= atLeast,
            $"expected at least {atLeast} passed checks of '{benchmarkPrefix}', got: {string.Join("; ", ResultChecks.All.Select(c => c.Benchmark))}");

    [Fact]
    public void Malloc_create_and_fill_run_and_check_their_results()
    {
        RunQuick("malloc", "--create", "--fill", "-i", "1000");
        AssertChecked("malloc create Int32[1000]", 3);
        AssertChecked("malloc fill Int32[1000]", 3);
    }

    [Fact]
    public void Malloc_fragmentation_runs_every_pattern_and_checks_it()
    {
        RunQuick("malloc", "--fragment", "-u", "-b", "1");
        AssertChecked("malloc fragment Byte x1", 5);
    }

    [Fact]
    public void Array_create_fill_and_math_run_and_check_their_results()
    {
        RunQuick("array", "--create", "--fill", "--math", "-l", "-u", "1000");
        AssertChecked("SafeArray<UInt64> create [1000]", 6);
        AssertChecked("SafeArray<UInt64> fill", 3);
        AssertChecked("SafeArray<UInt64> math", 7);
    }

    [Fact]
    public void Array_of_a_user_defined_struct_runs()
    {
        RunQuick("safe", "--fill", "--udt", "100");
        AssertChecked("SafeArray<Employee> fill", 3);
    }

    [Fact]
    public void Buffer_create_fill_and_math_run_in_floating_point()
    {
        RunQuick("buffer", "--create", "--fill", "--math", "-d", "1000");
        AssertChecked("FixedBuffer<Double> create", 6);
        AssertChecked("FixedBuffer<Double> fill", 3);
        AssertChecked("FixedBuffer<Double> math", 7);
    }

    [Fact]
    public void Hugearray_create_fill_and_math_run_with_parallel_forms()
    {
        RunQuick("hugearray", "--create", "--fill", "--math", "-h", "-u", "1000");
        AssertChecked("HugeArray<UInt16> create", 6);
        AssertChecked("HugeArray<UInt16> fill", 3);
        AssertChecked("HugeArray<UInt16> math", 11);
    }

    [Fact]
    public void Vector_mandelbrot_plots_agree_with_the_scalar_plot()
    {
        RunQuick("vector", "-f", "24");
        AssertChecked("vector mandelbrot Single 24x16", 10);
    }

    [Fact]
    public void Alloc_runs_in_process_and_checks_its_results()
    {
        RunQuick("alloc", "--in-process", "64");
        AssertChecked("alloc x64", 5);
    }

    [Fact]
    public void Info_prints_version_options_and_statistics()
    {
        Jembench.Result result = Jembench.Run("info");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        Assert.Contains("jemalloc 5.3.0", result.Output, StringComparison.Ordinal);
        Assert.Contains("opt.tcache_nslots_small_max", result.Output, StringComparison.Ordinal);
        Assert.Contains("stats.allocated", result.Output, StringComparison.Ordinal);
        Assert.Contains("Begin jemalloc statistics", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Info_json_is_jemalloc_json()
    {
        Jembench.Result result = Jembench.Run("info", "--json");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        using JsonDocument json = JsonDocument.Parse(result.Output);
        Assert.StartsWith("5.3.0", json.RootElement.GetProperty("jemalloc").GetProperty("version").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Results_are_exported_where_asked()
    {
        Jembench.Result result = Jembench.Run("malloc", "--fill", "-b", "64", "--quick", "-e", "markdown,csv", "--artifacts", _artifacts);
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        string results = Path.Combine(_artifacts, "results");
        Assert.NotEmpty(Directory.GetFiles(results, "*.md"));
        Assert.NotEmpty(Directory.GetFiles(results, "*.csv"));
        Assert.Empty(Directory.GetFiles(results, "*.html"));
        string csv = File.ReadAllText(Directory.GetFiles(results, "*.csv")[0]);
        Assert.Contains("Peak RSS", csv, StringComparison.Ordinal);
        Assert.Contains("Faults/op", csv, StringComparison.Ordinal);
        Assert.Contains("Jem Allocated", csv, StringComparison.Ordinal);
    }
}
