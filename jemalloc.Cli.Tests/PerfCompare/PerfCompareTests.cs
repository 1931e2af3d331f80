using jemalloc.PerfCompare;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.PerfCompare;

/// <summary>
/// ./build.sh compare-builds' measuring program (jemalloc.PerfCompare): its command line, its verdict,
/// a worker running every measurement against this tree's library, and a wrong result failing the
/// comparison. Each process run is a few seconds at most: no comparison is timed here.
/// </summary>
public sealed class PerfCompareTests
{
    private static readonly string s_assembly = Path.Combine(AppContext.BaseDirectory, "jemalloc.PerfCompare.dll");

    [Fact]
    public void The_options_name_both_builds_and_default_to_every_measurement_at_3_percent()
    {
        CompareOptions options = CompareOptions.Parse(["--old", "a.dll", "--new", "b.dll", "--old-label", "915b4c7"]);

        Assert.Equal(("a.dll", "b.dll", "915b4c7", "b.dll"), (options.OldAssembly, options.NewAssembly, options.OldLabel, options.NewLabel));
        Assert.Equal(0.03, options.Tolerance, 1e-12);
        Assert.Equal("cpu", options.Clock);
        Assert.Equal(Measurement.All, options.Measurements);
    }

    [Fact]
    public void Only_tolerance_and_counts_are_read()
    {
        CompareOptions options = CompareOptions.Parse(
            ["--old", "a", "--new", "b", "--only", "pool,writer", "--tolerance", "5%", "--rounds", "7", "--processes", "1", "--clock", "wall"]);

        Assert.Equal(["pool", "writer"], options.Measurements.Select(m => m.Name));
        Assert.Equal(0.05, options.Tolerance, 1e-12);
        Assert.Equal((7, 1, "wall"), (options.Rounds, options.Processes, options.Clock));
    }

    [Theory]
    [InlineData("--new", "b")]
    [InlineData("--old", "a")]
    [InlineData("--old", "a", "--new", "b", "--rounds", "2")]
    [InlineData("--old", "a", "--new", "b", "--rounds", "4", "--processes", "5")]
    [InlineData("--old", "a", "--new", "b", "--rounds")]
    [InlineData("--old", "a", "--new", "b", "--only", "pool,nothing")]
    [InlineData("--old", "a", "--new", "b", "--tolerance", "-1")]
    [InlineData("--old", "a", "--new", "b", "--clock", "tsc")]
    [InlineData("--old", "a", "--new", "b", "--fast", "1")]
    public void A_wrong_command_line_is_refused(params string[] args) =>
        Assert.Throws<UsageException>(() => CompareOptions.Parse(args));

    [Fact]
    public void The_verdict_is_the_median_of_the_rounds_ratios_against_the_tolerance()
    {
        Measurement pool = Measurement.Find("pool")!;
        double[] old = [100, 100, 100, 100, 100];

        RowResult within = RowResult.From(pool, old, [101, 99, 102, 98, 100], 1, 0.03);
        RowResult over = RowResult.From(pool, old, [104, 105, 106, 103, 200], 1, 0.03);

        Assert.Equal((1.00, "PASS", true), (within.Ratio, within.Verdict, within.WithinSpread));
        Assert.Equal((1.05, "FAIL", false), (over.Ratio, over.Verdict, over.WithinSpread));
        Assert.Equal("control", RowResult.From(Measurement.Find("control")!, old, [200, 200, 200, 200, 200], 1, 0.03).Verdict);
    }

    [Fact]
    public void A_pair_of_processes_slower_throughout_does_not_move_the_ratio()
    {
        // Rounds 0, 3, 6 ran on pair 0, whose new process was 12% slower than its siblings all along.
        double[] old = [100, 100, 100, 100, 100, 100, 100, 100, 100];
        RowResult row = RowResult.From(Measurement.Find("fixedbuffer")!, old, [112, 100, 101, 113, 99, 100, 112, 101, 100], 3, 0.03);

        Assert.Equal((1.00, 1.00, 1.12, "PASS"), (row.Ratio, row.PairLow, row.PairHigh, row.Verdict));
    }

    [Fact]
    public void A_worker_runs_every_measurement_against_this_library_and_its_checks_pass()
    {
        using WorkerProcess worker = WorkerProcess.Start("test", s_assembly);

        foreach (Measurement measurement in Measurement.All)
        {
            Sample sample = worker.Run(measurement, measurement.BytesPerOperation > 0 ? 1 : measurement.ElementsPerOperation > 1 ? 3 : 1000);
            Assert.True(sample.Wall > 0 && (sample.Cpu > 0 || !OperatingSystem.IsLinux()) && sample.CompiledMethods > 0, $"{measurement.Name}: {sample}");
        }
    }

    [Fact]
    public void A_wrong_result_fails_the_comparison_with_exit_code_2()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.Run(ChildProcessRunner.DotnetHost,
            ["exec", s_assembly, "--old", s_assembly, "--new", s_assembly, "--only", "pool", "--processes", "1", "--rounds", "3", "--warmup-ms", "0"],
            new Dictionary<string, string?> { [Workloads.BreakVariable] = "pool" }, AppContext.BaseDirectory, TimeSpan.FromMinutes(2));

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Contains("WRONG RESULT", result.Error, StringComparison.Ordinal);
    }
}
