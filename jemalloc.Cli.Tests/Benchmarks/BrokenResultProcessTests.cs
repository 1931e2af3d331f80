using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// jembench run as a real process, as a user runs it, with the hidden switch that corrupts every
/// result before it is checked: each process layout (suites in the jembench process, <c>alloc</c>
/// with one benchmark process per jemalloc configuration, <c>micro</c>) must fail with exit code 2
/// and name the wrong result; the same run without the switch must succeed. Smallest sizes, one
/// iteration each (<c>--quick</c>).
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class BrokenResultProcessTests : IDisposable
{
    private static readonly TimeSpan InProcessTimeout = TimeSpan.FromMinutes(5);

    // An out-of-process run generates and builds a benchmark project first.
    private static readonly TimeSpan OutOfProcessTimeout = TimeSpan.FromMinutes(15);

    private readonly string _artifacts = Path.Combine(Path.GetTempPath(), "jembench-broken-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_artifacts))
        {
            Directory.Delete(_artifacts, recursive: true);
        }
    }

    [Fact]
    public void In_process_alloc_with_a_wrong_result_exits_2_naming_it()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "alloc", "--in-process", "16");
        AssertFailedWith(result, "wrong result: alloc x16: sum of sizes and bytes written in the last operation");
    }

    [Fact]
    public void In_process_alloc_with_right_results_exits_0()
    {
        ChildProcessRunner.Result result = Run(broken: false, InProcessTimeout, "alloc", "--in-process", "16");
        AssertSucceeded(result);
    }

    [Fact]
    public void Out_of_process_alloc_with_a_wrong_result_exits_2_naming_it()
    {
        // --conf gives one configuration, so one benchmark process: the check made there must reach this one.
        ChildProcessRunner.Result result = Run(broken: true, OutOfProcessTimeout, "alloc", "--conf", "tcache:true", "16");
        AssertFailedWith(result, "wrong result: alloc x16: sum of sizes and bytes written in the last operation");
    }

    [Fact]
    public void Out_of_process_alloc_with_right_results_exits_0()
    {
        ChildProcessRunner.Result result = Run(broken: false, OutOfProcessTimeout, "alloc", "--conf", "tcache:true", "16");
        AssertSucceeded(result);
        Assert.Contains("result check(s) passed", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Micro_with_a_wrong_result_exits_2_naming_it()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "micro", "--filter", "*AllocationBenchmarks*");
        AssertFailedWith(result, "wrong result: micro allocation: je_mallocx(ZERO) + je_sdallocx: every byte of a 64-byte block is zero");
        Assert.Contains("wrong result: micro allocation: new FixedBuffer<byte>(64) + Free()", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Micro_with_right_results_exits_0()
    {
        ChildProcessRunner.Result result = Run(broken: false, InProcessTimeout, "micro", "--filter", "*AllocationBenchmarks*");
        AssertSucceeded(result);
    }

    [Fact]
    public void Micro_record_tables_with_a_wrong_lookup_result_exit_2_naming_both_sides()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "micro", "--filter", "*RecordTableBenchmarks*");
        AssertFailedWith(result, "wrong result: micro records [NativeRecordTable, 2000000]: sum of the scores and categories the lookups found");
        Assert.Contains("wrong result: micro records [StructRecordTable, 2000000]: sum of the scores and categories the lookups found", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Micro_memory_pools_with_a_wrong_result_exit_2_naming_every_pool_and_with_right_results_exit_0()
    {
        ChildProcessRunner.Result broken = Run(broken: true, InProcessTimeout, "micro", "--filter", "*MemoryPoolBenchmarks*");
        AssertFailedWith(broken, "wrong result: micro memory pool: JemMemoryPool: the bytes written and read back over 1024 rents");
        Assert.Contains("wrong result: micro memory pool: MemoryPool<byte>.Shared", broken.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: micro memory pool: ArrayPool<byte>.Shared", broken.Output, StringComparison.Ordinal);
        AssertSucceeded(Run(broken: false, InProcessTimeout, "micro", "--filter", "*MemoryPoolBenchmarks*"));
    }

    [Fact]
    public void A_zeroed_create_that_is_not_zero_fails_the_malloc_suite()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "malloc", "--create", "-l", "1001");
        AssertFailedWith(result, "wrong result: malloc create Int64[1001]: Jem.Mallocx(Zero): every other element is zero");
        Assert.Contains("wrong result: malloc create Int64[1001]: managed array: every other element is zero", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_wrong_structure_sum_fails_the_array_suite()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "array", "--math", "-f", "1001");
        Assert.Equal(Program.ExitBenchmarkFailed, result.ExitCode);
        Assert.Contains("wrong result: SafeArray<Single> math", result.Output, StringComparison.Ordinal);
        Assert.Contains("the sum is", result.Output, StringComparison.Ordinal);
    }

    private ChildProcessRunner.Result Run(bool broken, TimeSpan timeout, params string[] arguments) =>
        JembenchProcess.Run(new Dictionary<string, string?> { [BrokenResultSwitch.Variable] = broken ? "1" : null }, timeout,
            [.. arguments, "--quick", "--artifacts", _artifacts]);

    private static void AssertFailedWith(ChildProcessRunner.Result result, string failure)
    {
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.Contains("jembench: FAILED", result.Output, StringComparison.Ordinal);
        Assert.True(result.Output.Contains(failure, StringComparison.Ordinal), $"expected '{failure}' in: {result}");
    }

    private static void AssertSucceeded(ChildProcessRunner.Result result)
    {
        Assert.True(result.ExitCode == Program.ExitSuccess, $"expected exit code {Program.ExitSuccess}: {result}");
        Assert.Contains("jembench: every benchmark ran", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("wrong result", result.Output, StringComparison.Ordinal);
    }
}
