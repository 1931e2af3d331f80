using System.Globalization;
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

    private string ExportedCsv() =>
        string.Concat(Directory.GetFiles(Path.Combine(_artifacts, "results"), "*.csv").Select(File.ReadAllText));

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
        RunQuick("malloc", "--fragment", "-u", "-b", "2", "-e", "csv");
        // Per row: the timed operation's count, the sampled operation's count, every element of the surviving blocks.
        AssertChecked("malloc fragment Byte x2", 15);
        string csv = ExportedCsv();
        foreach (FragmentationColumn column in FragmentationColumns.All)
        {
            Assert.Contains(column.ColumnName, csv, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Array_create_fill_and_math_run_and_check_their_results()
    {
        Jembench.Result result = RunQuick("array", "--create", "--fill", "--math", "-l", "-u", "1000");
        // Under the table: the fill policy the run's fills used.
        Assert.Contains("Fill policy: automatic, last-level cache ", result.Output, StringComparison.Ordinal);
        AssertChecked("SafeArray<UInt64> create: ", 6);
        AssertChecked("SafeArray<UInt64> fill", 5);
        AssertChecked("SafeArray<UInt64> fill: fill policy's choice", 1);
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
        AssertChecked("FixedBuffer<Double> fill", 5);
        AssertChecked("FixedBuffer<Double> fill: fill policy's choice", 1);
        AssertChecked("FixedBuffer<Double> math", 7);
    }

    [Fact]
    public void Hugearray_create_fill_and_math_run_with_parallel_forms()
    {
        RunQuick("hugearray", "--create", "--fill", "--math", "-h", "-u", "1000", "-e", "csv");
        // Managed and native rows may process different element counts: both columns compare equal units of work.
        string csv = ExportedCsv();
        Assert.Contains("ns/element", csv, StringComparison.Ordinal);
        Assert.Contains("GB/s", csv, StringComparison.Ordinal);
        AssertChecked("HugeArray<UInt16> create", 6);
        AssertChecked("HugeArray<UInt16> fill", 5);
        AssertChecked("HugeArray<UInt16> fill: fill policy's choice", 1);
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
        Jembench.Result result = RunQuick("alloc", "--in-process", "64");
        // One check per row: 7, and the mimalloc row's where the library is installed.
        int rows = Mimalloc.IsAvailable ? 8 : 7;
        Assert.Equal(rows, ResultChecks.All.Count(c => c.Passed && c.Benchmark.StartsWith("alloc x64", StringComparison.Ordinal)));
        if (!Mimalloc.IsAvailable)
        {
            Assert.Contains(Mimalloc.MissingMessage, result.Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Alloc_threads_runs_every_thread_count_and_freeing_thread_and_checks_its_results()
    {
        // One more thread than cores, so the oversubscribed rows are run and said so.
        int cores = Environment.ProcessorCount;
        int many = cores + 1;
        Jembench.Result result = RunQuick("alloc", "--in-process", "--threads", $"1,{many}", "64", "-e", "csv");
        int rows = Mimalloc.IsAvailable ? 7 : 6;
        // Freed on the allocating thread at 1 and at `many` threads; on the next thread only at `many`.
        Assert.Equal(rows, ResultChecks.All.Count(c => c.Passed && c.Benchmark == "alloc --threads 1 x64, freed on the allocating thread"));
        Assert.Equal(rows, ResultChecks.All.Count(c => c.Passed && c.Benchmark == $"alloc --threads {many} x64, freed on the allocating thread"));
        Assert.Equal(rows, ResultChecks.All.Count(c => c.Passed && c.Benchmark == $"alloc --threads {many} x64, freed on the next thread"));
        Assert.Equal(3 * rows, ResultChecks.All.Count);
        Assert.DoesNotContain(ResultChecks.All, c => c.Benchmark == "alloc --threads 1 x64, freed on the next thread");
        Assert.Contains($"this machine has {cores} logical cores: the {many}-thread rows run more threads than cores", result.Output, StringComparison.Ordinal);
        Assert.Contains("freeing on the next thread needs 2 threads or more", result.Output, StringComparison.Ordinal);
        string csv = ExportedCsv();
        Assert.Contains(CoresColumn.Describe(many, cores), csv, StringComparison.Ordinal);
        Assert.Contains("M allocs/s", csv, StringComparison.Ordinal);
    }

    [Fact]
    public void Alloc_without_mimalloc_says_so_and_leaves_its_row_out()
    {
        Environment.SetEnvironmentVariable(Mimalloc.HideVariable, "1");
        try
        {
            Jembench.Result result = RunQuick("alloc", "--in-process", "64");
            Assert.Contains(Mimalloc.MissingMessage, result.Output, StringComparison.Ordinal);
            Assert.Equal(7, ResultChecks.All.Count(c => c.Passed && c.Benchmark.StartsWith("alloc x64", StringComparison.Ordinal)));
        }
        finally
        {
            Environment.SetEnvironmentVariable(Mimalloc.HideVariable, null);
        }
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
        // The fill policy, with every size band's automatic choice made and its figures.
        Assert.Contains("fill policy: automatic, last-level cache ", result.Output, StringComparison.Ordinal);
        Assert.Contains("best of ", result.Output, StringComparison.Ordinal);
        Assert.Contains(" MiB: ", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("not chosen yet", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Info_reports_the_platform_it_runs_on_and_the_loaded_library_page_size()
    {
        Jembench.Result result = Jembench.Run("info");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        Assert.Contains($"runtime: {System.Runtime.InteropServices.RuntimeInformation.RuntimeIdentifier} (", result.Output, StringComparison.Ordinal);
        Assert.Contains($"{System.Runtime.InteropServices.RuntimeInformation.ProcessArchitecture} process", result.Output, StringComparison.Ordinal);
        Assert.Contains($"pages: jemalloc {Jem.PageSize.ToString("N0", CultureInfo.InvariantCulture)} bytes (compiled in), OS {Environment.SystemPageSize.ToString("N0", CultureInfo.InvariantCulture)} bytes", result.Output, StringComparison.Ordinal);
        Assert.Contains($"transparent huge pages: {HugePageInfo.Mode}", result.Output, StringComparison.Ordinal);
        // The huge-page measurement is made for the report and shown with its choice (or why there is none).
        string policy = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("huge-page policy: ", StringComparison.Ordinal));
        Assert.DoesNotContain("not measured yet", policy, StringComparison.Ordinal);
        Assert.Contains(HugePageInfo.IsAvailable ? " ms/GiB in huge pages against " : "4 KiB pages, not measured: ", policy, StringComparison.Ordinal);
        Assert.Contains("HugePageSelection = ", result.Output, StringComparison.Ordinal);
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
