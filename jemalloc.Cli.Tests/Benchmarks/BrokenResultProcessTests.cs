using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// jembench run as a real process, as a user runs it, with the hidden switch that corrupts every
/// result before it is checked: each process layout (suites in the jembench process, <c>alloc</c>
/// with one benchmark process per jemalloc configuration, <c>micro</c>) must fail with exit code 2
/// and name the wrong result; the same run without the switch must succeed. Every suite and verb
/// has such a test in which every one of its benchmarks must fail (a check that cannot fail leaves
/// one passing); the main job's table is tested with a wrong first, middle and last element each on
/// its own; and a run whose suites record no check at all must fail too. Smallest sizes, one
/// iteration each (<c>--quick</c>), whose result is the one checked.
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
    public void In_process_alloc_threads_with_wrong_results_fails_every_row()
    {
        // 1 thread: freed on the allocating thread; 2 threads: on the allocating and on the next thread.
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "alloc", "--in-process", "--threads", "1,2", "16");
        AssertEveryBenchmarkFailed(result, benchmarks: 3 * AllocThreadsRows);
        Assert.Contains("wrong result: alloc --threads 2 x16, freed on the next thread: sum of the sizes and of both marks of every block", result.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: alloc --threads 1 x16, freed on the allocating thread: ", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void In_process_alloc_threads_with_right_results_exits_0() =>
        AssertSucceeded(Run(broken: false, InProcessTimeout, "alloc", "--in-process", "--threads", "1,2", "16"));

    [Fact]
    public void Out_of_process_alloc_threads_with_wrong_results_fails_every_row()
    {
        // --conf gives one configuration, so one benchmark process: the checks made there must reach this one.
        ChildProcessRunner.Result result = Run(broken: true, OutOfProcessTimeout, "alloc", "--conf", "tcache:true", "--threads", "2", "16");
        // The benchmark process also reports each wrong check as a failed cleanup, so count the wrong results only.
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.True(Lines(result, "  wrong result: ") == 2 * AllocThreadsRows, $"expected {2 * AllocThreadsRows} wrong results, one per benchmark: {result}");
        Assert.DoesNotContain("no result check was made", result.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: alloc --threads 2 x16, freed on the next thread: ", result.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: alloc --threads 2 x16, freed on the allocating thread: ", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Out_of_process_alloc_threads_with_right_results_exits_0() =>
        AssertSucceeded(Run(broken: false, OutOfProcessTimeout, "alloc", "--conf", "tcache:true", "--threads", "2", "16"));

    // The multi-thread alloc suite's allocators: 7, less mimalloc's where the library is missing.
    private static int AllocThreadsRows => Mimalloc.IsAvailable ? 7 : 6;

    [Fact]
    public void Micro_with_a_wrong_result_exits_2_naming_it()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "micro", "--filter", "*AllocationBenchmarks*");
        AssertFailedWith(result, "wrong result: micro allocation: je_mallocx(ZERO) + je_sdallocx: every byte of a 64-byte block is zero");
        Assert.Contains("wrong result: micro allocation: new FixedBuffer<byte>(64) + Free()", result.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: micro allocation: Jem.Mallocx + Jem.Dallocx: the block has the real size", result.Output, StringComparison.Ordinal);
        Assert.Contains("wrong result: micro allocation: Jem.Mallocx(Align 16) + Jem.Dallocx: the block is 16-byte aligned", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Micro_with_right_results_exits_0_measured_under_tiered_compilation()
    {
        // jembench itself runs fully optimized code: the line comes from the process it started for the default mode.
        ChildProcessRunner.Result result = Run(broken: false, InProcessTimeout, "micro", "--filter", "*AllocationBenchmarks*");
        AssertSucceeded(result);
        Assert.Contains("jembench micro: JIT: tiered compilation with dynamic PGO", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Micro_with_jit_full_runs_in_jembench_itself_and_a_wrong_result_still_exits_2()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "micro", "--jit", "full", "--filter", "*AllocationBenchmarks*");
        AssertFailedWith(result, "wrong result: micro allocation: new FixedBuffer<byte>(64) + Free()");
        Assert.Contains("jembench micro: JIT: every method fully optimized at its first call", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("JIT: tiered compilation", result.Output, StringComparison.Ordinal);
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
        // Only the middle element is corrupted, so the ends pass and the zero check is the one that must catch it.
        ChildProcessRunner.Result result = Run(broken: "middle", InProcessTimeout, "malloc", "--create", "-l", "1001");
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

    // The main job's table (./build.sh jembench: array --fill), one row per benchmark, each of which
    // must be caught with a wrong element at any position on its own.
    private static readonly string[] ArrayFillRows =
    [
        "SafeArray<Int64> fill: managed array [1001]",
        "SafeArray<Int64> fill: SafeArray<Int64> [1001]",
        "SafeArray<Int64> fill: machine limit [1001]",
        "SafeArray<Int64> fill: fill policy's choice [1001]",
        "SafeArray<Int64> create: managed array [1001]",
        "SafeArray<Int64> create: SafeArray<Int64> (4 KiB pages) [1001]",
        "SafeArray<Int64> create: SafeArray<Int64> (huge pages) [1001]",
        "SafeArray<Int64> create: SafeArray<Int64> (created with the value, 4 KiB pages) [1001]",
        "SafeArray<Int64> create: SafeArray<Int64> (created with the value, huge pages) [1001]",
    ];

    [Theory]
    [InlineData(BrokenResultSwitch.First)]
    [InlineData(BrokenResultSwitch.Middle)]
    [InlineData(BrokenResultSwitch.Last)]
    public void The_main_job_fails_every_row_whose_result_has_one_wrong_element(string position)
    {
        ChildProcessRunner.Result result = Run(position, InProcessTimeout, "array", "--fill", "-l", "1001");
        // Fill: managed, SafeArray, memset, non-temporal stores and the fill policy's choice; create: managed and four native ways.
        AssertEveryBenchmarkFailed(result, benchmarks: 10);
        foreach (string row in ArrayFillRows)
        {
            Assert.True(result.Output.Contains($"wrong result: {row}: ", StringComparison.Ordinal), $"expected a wrong result for '{row}': {result}");
        }
    }

    [Fact]
    public void The_main_job_with_right_results_exits_0()
    {
        AssertSucceeded(Run(broken: false, InProcessTimeout, "array", "--fill", "-l", "1001"));
    }

    [Fact]
    public void Every_array_math_row_with_a_wrong_result_exits_2() =>
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "array", "--math", "-l", "1001"), benchmarks: 5);

    [Fact]
    public void Every_buffer_row_with_wrong_results_exits_2() =>
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "buffer", "--fill", "--math", "-i", "1001"), benchmarks: 15);

    [Fact]
    public void Every_hugearray_row_with_wrong_results_exits_2() =>
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "hugearray", "--fill", "--math", "-b", "1001"), benchmarks: 18);

    [Fact]
    public void Every_vector_row_with_wrong_pixels_exits_2()
    {
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "vector", "-f", "24");
        AssertEveryBenchmarkFailed(result, benchmarks: 5);
        Assert.Contains("plot equals the scalar plot pixel for pixel", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_malloc_fill_and_fragment_row_with_a_wrong_result_exits_2()
    {
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "malloc", "--fill", "-i", "1001"), benchmarks: 3);
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "malloc", "--fragment", "-b", "2"), benchmarks: 5);
    }

    [Fact]
    public void Every_hugepages_row_with_a_wrong_result_exits_2() =>
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "hugepages", "--create", "--columnar", "--columns", "3", "100003"), benchmarks: 7);

    [Theory]
    [InlineData(BrokenResultSwitch.First)]
    [InlineData(BrokenResultSwitch.Middle)]
    [InlineData(BrokenResultSwitch.Last)]
    public void Every_hugepages_row_fails_with_one_wrong_element_of_what_its_last_timed_operation_made(string position)
    {
        // One element of the created array or of the result column; the columnar sums are left right,
        // so the row-by-row check of the result column is the one that must catch it.
        ChildProcessRunner.Result result = Run(position, InProcessTimeout, "hugepages", "--create", "--columnar", "--columns", "3", "100003");
        AssertEveryBenchmarkFailed(result, benchmarks: 7);
        Assert.Equal(4, Lines(result, "  wrong result: hugepages create x100003: "));
        Assert.Equal(3, Lines(result, "  wrong result: hugepages columnar x100003: "));
        Assert.True(result.Output.Contains("rows of the result column (last timed operation) is the sum of its row", StringComparison.Ordinal), $"the row check caught it: {result}");
    }

    [Fact]
    public void Every_arena_row_with_a_wrong_result_exits_2() =>
        AssertEveryBenchmarkFailed(Run(broken: true, InProcessTimeout, "arena", "1000"), benchmarks: 7);

    [Fact]
    public void Every_other_micro_benchmark_with_a_wrong_result_exits_2()
    {
        // The micro classes the tests above do not run: indexers, checked mode, vector multiply, GC transitions.
        ChildProcessRunner.Result result = Run(broken: true, InProcessTimeout, "micro", "--filter",
            "*IndexerBenchmarks*", "*CheckedModeBenchmarks*", "*VectorMultiplyBenchmarks*", "*GcTransitionBenchmarks*");
        AssertEveryBenchmarkFailed(result, benchmarks: 49);
    }

    [Fact]
    public void A_run_whose_suites_make_no_result_check_exits_2_naming_every_benchmark()
    {
        // The guard itself: a suite that checks nothing (here: every check dropped) proves nothing.
        ChildProcessRunner.Result result = Run(BrokenResultSwitch.NoChecks, InProcessTimeout, "array", "--fill", "-l", "1001");
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.Contains("jembench: FAILED: 10 problem(s); 0 result check(s) passed.", result.Output, StringComparison.Ordinal);
        Assert.Equal(10, Lines(result, "  no result check was made: SafeArrayBenchmarks<Int64>."));
        Assert.DoesNotContain("every benchmark ran", result.Output, StringComparison.Ordinal);
    }

    private ChildProcessRunner.Result Run(bool broken, TimeSpan timeout, params string[] arguments) =>
        Run(broken ? BrokenResultSwitch.Everywhere : null, timeout, arguments);

    private ChildProcessRunner.Result Run(string? broken, TimeSpan timeout, params string[] arguments) =>
        JembenchProcess.Run(new Dictionary<string, string?> { [BrokenResultSwitch.Variable] = broken }, timeout,
            [.. arguments, "--quick", "--artifacts", _artifacts]);

    /// <summary>Exit code 2, and as many wrong results as the run has benchmarks: each benchmark's check caught its corrupted result.</summary>
    private static void AssertEveryBenchmarkFailed(ChildProcessRunner.Result result, int benchmarks)
    {
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, $"expected exit code {Program.ExitBenchmarkFailed}: {result}");
        Assert.True(result.Output.Contains($"jembench: FAILED: {benchmarks} problem(s);", StringComparison.Ordinal), $"expected {benchmarks} problems: {result}");
        Assert.True(Lines(result, "  wrong result: ") == benchmarks, $"expected {benchmarks} wrong results, one per benchmark: {result}");
        Assert.DoesNotContain("no result check was made", result.Output, StringComparison.Ordinal);
    }

    private static int Lines(ChildProcessRunner.Result result, string prefix) =>
        result.Output.Split('\n').Count(line => line.TrimEnd('\r').StartsWith(prefix, StringComparison.Ordinal));

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
