using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// <c>jembench strings</c> run as a real process with the hidden switch that corrupts every side's
/// result before it is checked: with each side in a process of its own and with every side in the
/// jembench process, each side's wrong filtered-row count and wrong group amounts must be named and
/// the command must exit 2; the first, middle and last group alone must each be caught; the same runs
/// without the switch must succeed.
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class StringsBrokenResultTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(5);
    private static readonly string[] Sides = ["managed", "native-4k", "native-huge", "decode"];

    private readonly string _folder = Directory.CreateTempSubdirectory("strings-broken-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Every_side_with_a_wrong_result_exits_2_naming_it(bool inProcess)
    {
        ChildProcessRunner.Result result = Run(BrokenResultSwitch.Everywhere, inProcess);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.DoesNotContain("results checked", result.Output, StringComparison.Ordinal);
        foreach (string side in Sides)
        {
            Assert.True(result.Output.Contains($"| {side} |", StringComparison.Ordinal), $"{side} did not run: {result}");
            Assert.True(Lines(result, side, "rows have a note starting with") == 1, $"{side}, filtered rows: {result}");
            Assert.True(Lines(result, side, "category '") == 3, $"{side}, groups: {result}");
        }
    }

    [Theory]
    [InlineData(BrokenResultSwitch.First)]
    [InlineData(BrokenResultSwitch.Middle)]
    [InlineData(BrokenResultSwitch.Last)]
    public void One_wrong_group_alone_is_caught_on_every_side(string position)
    {
        ChildProcessRunner.Result result = Run(position, inProcess: false);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        foreach (string side in Sides)
        {
            Assert.True(Lines(result, side, "category '") == 1, $"{side}: {result}");
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_right_result_exits_0(bool inProcess)
    {
        ChildProcessRunner.Result result = Run(null, inProcess);
        Assert.True(result.ExitCode == Program.ExitSuccess, $"expected exit code {Program.ExitSuccess}: {result}");
        Assert.Contains("strings: results checked: every side kept", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("WRONG RESULT", result.Error, StringComparison.Ordinal);
    }

    // The lines naming a wrong figure of the side that contain `what`.
    private static int Lines(ChildProcessRunner.Result result, string side, string what) =>
        result.Error.Split('\n').Count(l => l.StartsWith($"strings: WRONG RESULT: {side}: ", StringComparison.Ordinal) && l.Contains(what, StringComparison.Ordinal));

    private ChildProcessRunner.Result Run(string? broken, bool inProcess)
    {
        string[] arguments = ["strings", "--rows", "30011", "--dir", _folder];
        return JembenchProcess.Run(new Dictionary<string, string?> { [BrokenResultSwitch.Variable] = broken }, Timeout,
            inProcess ? [.. arguments, "--in-process"] : arguments);
    }
}
