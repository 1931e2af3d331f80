using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites.HugePages;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public sealed class HugePagesVerbTests : IDisposable
{
    private readonly string _artifacts = Path.Combine(Path.GetTempPath(), "jembench-hugepages-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        ColumnarWorkload.Columns = ColumnarWorkload.DefaultColumns;
        if (Directory.Exists(_artifacts))
        {
            Directory.Delete(_artifacts, recursive: true);
        }
    }

    [Fact]
    public void Create_and_columnar_run_quick_and_check_their_results()
    {
        Jembench.Result result = Jembench.Run("hugepages", "--create", "--columnar", "--columns", "3", "--quick", "--artifacts", _artifacts, "100003");

        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("every benchmark ran", result.Output, StringComparison.Ordinal);
        Assert.Contains("Huge-page policy: ", result.Output, StringComparison.Ordinal);
        // Four create rows (the last timed operation's array kept, its elements counted, every element), three
        // columnar rows (two sums, every row of the result).
        Assert.Equal(12, ResultChecks.All.Count(c => c.Passed && c.Benchmark.StartsWith("hugepages create x100003: ", StringComparison.Ordinal)));
        Assert.Equal(9, ResultChecks.All.Count(c => c.Passed && c.Benchmark.StartsWith("hugepages columnar x100003: ", StringComparison.Ordinal)));
        Assert.Contains(ResultChecks.All, c => c.Description.Contains("every one of the 100,003 rows of the result column", StringComparison.Ordinal));
        Assert.Equal(3, ColumnarWorkload.Columns);
    }

    [Theory]
    [InlineData("choose what to benchmark", "hugepages", "1000")]
    [InlineData("--columns value 0 is out of range", "hugepages", "--columnar", "--columns", "0", "1000")]
    [InlineData("--columns value 65 is out of range", "hugepages", "--columnar", "--columns", "65", "1000")]
    [InlineData("--budget is in MiB", "hugepages", "--columnar", "--budget", "0", "1000")]
    [InlineData("more than the --budget of 1 MiB", "hugepages", "--columnar", "--budget", "1", "1000000")]
    [InlineData("element count 0 is out of range", "hugepages", "--create", "0")]
    [InlineData("element count 2,147,483,592 is out of range", "hugepages", "--create", "2147483592")]
    public void Bad_arguments_are_refused_with_a_message(string message, params string[] args)
    {
        Jembench.Result result = Jembench.Run(args);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", result.All, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(16385L)]
    [InlineData(100_000L)]
    [InlineData(2L << 20)]
    [InlineData((2L << 20) + 1)]
    [InlineData(800_000_000L)]
    [InlineData(3_000_000_001L)]
    public void The_size_class_computed_for_the_budget_is_jemallocs(long bytes) =>
        Assert.Equal((long)Jem.Nallocx((nuint)bytes), ColumnarWorkload.LargeSizeClass(bytes));

    [Fact]
    public void The_columnar_kernels_agree_with_the_expected_total()
    {
        const int Rows = 1003;
        ulong[][] columns = [new ulong[Rows], new ulong[Rows]];
        ulong[] result = new ulong[Rows];
        unsafe
        {
            fixed (ulong* first = columns[0], second = columns[1], sums = result)
            {
                (ulong vertical, ulong horizontal) = ColumnarWorkload.Run([(nint)first, (nint)second], sums, Rows);
                Assert.Equal(ColumnarWorkload.ExpectedTotal(Rows, 2), vertical);
                Assert.Equal(vertical, horizontal);
            }
        }

        Assert.Equal(unchecked(columns[0][5] + columns[1][5]), result[5]);
        Assert.NotEqual(columns[0][5], columns[1][5]);
        Assert.DoesNotContain(0UL, columns[0]);
    }
}
