using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public sealed class ArenaVerbTests : IDisposable
{
    private readonly string _artifacts = Path.Combine(Path.GetTempPath(), "jembench-arena-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_artifacts))
        {
            Directory.Delete(_artifacts, recursive: true);
        }
    }

    [Fact]
    public void The_arena_suite_runs_quick_and_checks_every_benchmark()
    {
        Jembench.Result result = Jembench.Run("arena", "--quick", "--artifacts", _artifacts, "1000");

        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("every benchmark ran", result.Output, StringComparison.Ordinal);
        // Seven benchmarks, each checking its sum and that nothing is left in use in the arena.
        Assert.Equal(14, ResultChecks.All.Count(c => c.Passed && c.Benchmark == "arena x1000"));
    }

    [Theory]
    [InlineData("0")]
    [InlineData("10000001")]
    public void Allocation_counts_out_of_range_are_refused(string count)
    {
        Jembench.Result result = Jembench.Run("arena", count);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("allocation count", result.Error, StringComparison.Ordinal);
    }
}
