using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// <c>jembench columnar</c> run as a real process with the hidden switch that corrupts every side's
/// sums before they are checked: with each side in a process of its own and with every side in the
/// jembench process, every side's wrong column sum and wrong row sums must be named and the command
/// must exit 2; each of the first, middle and last column on its own must be caught; the same runs
/// without the switch must succeed.
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class ColumnarBrokenResultTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(5);
    private static readonly string[] Sides = ["managed", "native-4k", "native-huge", "decode"];

    private readonly string _folder = Directory.CreateTempSubdirectory("columnar-broken-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Every_side_with_wrong_sums_exits_2_naming_them(bool inProcess)
    {
        ChildProcessRunner.Result result = Run(BrokenResultSwitch.Everywhere, inProcess);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.DoesNotContain("results checked", result.Output, StringComparison.Ordinal);
        foreach (string side in Sides)
        {
            Assert.True(result.Output.Contains($"| {side} |", StringComparison.Ordinal), $"{side} did not run: {result}");
            foreach (int column in new[] { 0, 1, 2 })
            {
                Assert.True(result.Error.Contains($"columnar: WRONG RESULT: {side}: the sum of column {column} is", StringComparison.Ordinal), $"{side}, column {column}: {result}");
            }

            Assert.True(result.Error.Contains($"columnar: WRONG RESULT: {side}: the row sums' check value is", StringComparison.Ordinal), $"{side}, rows: {result}");
        }
    }

    [Theory]
    [InlineData(BrokenResultSwitch.First, 0)]
    [InlineData(BrokenResultSwitch.Middle, 1)]
    [InlineData(BrokenResultSwitch.Last, 2)]
    public void One_wrong_column_sum_alone_is_caught_on_every_side(string position, int column)
    {
        ChildProcessRunner.Result result = Run(position, inProcess: false);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        foreach (string side in Sides)
        {
            Assert.True(result.Error.Contains($"columnar: WRONG RESULT: {side}: the sum of column {column} is", StringComparison.Ordinal), $"{side}: {result}");
            Assert.Equal(1, result.Error.Split('\n').Count(l => l.StartsWith($"columnar: WRONG RESULT: {side}: the sum of column", StringComparison.Ordinal)));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Right_sums_exit_0(bool inProcess)
    {
        ChildProcessRunner.Result result = Run(null, inProcess);
        Assert.True(result.ExitCode == Program.ExitSuccess, $"expected exit code {Program.ExitSuccess}: {result}");
        Assert.Contains("every side's 3 column sums and 5,001 row sums match the reference", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("WRONG RESULT", result.Error, StringComparison.Ordinal);
    }

    private ChildProcessRunner.Result Run(string? broken, bool inProcess)
    {
        string[] arguments = ["columnar", "--columns", "3", "--rows", "5001", "--dir", _folder];
        return JembenchProcess.Run(new Dictionary<string, string?> { [BrokenResultSwitch.Variable] = broken }, Timeout,
            inProcess ? [.. arguments, "--in-process"] : arguments);
    }
}
