using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// <c>jembench cache</c> run as a real process with the hidden switch that corrupts the first value each process
/// reads (its key with <c>first</c>, its version with <c>middle</c>, its check with <c>last</c>, all three with
/// <c>1</c>): with each side in a process of its own and with every side in the jembench process, every side's
/// wrong read must be named and the command must exit 2; the same run without the switch must succeed.
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class CacheBrokenResultTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(5);
    private static readonly string[] Sides = ["native", "bitfaster-lru", "bitfaster-lfu", "memorycache", "dictionary"];

    [Theory]
    [InlineData(BrokenResultSwitch.Everywhere, false, "was written for key")]
    [InlineData(BrokenResultSwitch.Everywhere, true, "was written for key")]
    [InlineData(BrokenResultSwitch.First, false, "was written for key")]
    [InlineData(BrokenResultSwitch.Middle, false, "which was never written")]
    [InlineData(BrokenResultSwitch.Last, true, "fails its check")]
    public void Every_side_with_a_wrong_value_exits_2_naming_it(string broken, bool inProcess, string what)
    {
        ChildProcessRunner.Result result = Run(broken, inProcess);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.DoesNotContain("results checked", result.Output, StringComparison.Ordinal);
        foreach (string side in Sides)
        {
            Assert.True(result.Error.Contains($"WRONG RESULT: cache ({side}): the value read for key ", StringComparison.Ordinal), $"{side}: {result}");
            Assert.True(result.Error.Contains($"cache: the {side} side failed.", StringComparison.Ordinal), $"{side}: {result}");
        }

        Assert.Contains(what, result.Error, StringComparison.Ordinal);
        Assert.Contains("5 side(s) failed", result.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_right_result_exits_0(bool inProcess)
    {
        ChildProcessRunner.Result result = Run(null, inProcess);
        Assert.True(result.ExitCode == Program.ExitSuccess, $"expected exit code {Program.ExitSuccess}: {result}");
        Assert.Contains("cache: results checked: each of the", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("WRONG RESULT", result.Error, StringComparison.Ordinal);
        foreach (string side in Sides)
        {
            Assert.Contains($"| {side} | 1 |", result.Output, StringComparison.Ordinal);
        }
    }

    private static ChildProcessRunner.Result Run(string? broken, bool inProcess)
    {
        string[] arguments = ["cache", "--entries", "3000", "--ops", "5000", "--threads", "1", "--workload", "ycsb-b"];
        return JembenchProcess.Run(new Dictionary<string, string?> { [BrokenResultSwitch.Variable] = broken }, Timeout,
            inProcess ? [.. arguments, "--in-process"] : arguments);
    }
}
