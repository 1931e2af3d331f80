using System.Text.Json;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.IO;
using jemalloc.Cli.Commands;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// <c>jembench io</c> at small sizes: both suites end to end in this process and as real processes
/// (each side a process of its own), a corrupted side failing with exit code 2 in both layouts, the
/// managed writers refused past one array, and bad options refused with exit code 1.
/// </summary>
[Collection(JembenchRuns.Name)]
public class IoVerbTests
{
    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromMinutes(5);

    [Fact]
    public void The_json_suite_runs_the_three_writers_and_the_machine_s_limit_and_checks_their_bytes_against_the_reference()
    {
        Jembench.Result result = Jembench.Run("io", "--json", "--json-size", "1MB", "--initial-capacity", "4KiB");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.Contains("Every writer starts at 4,096 bytes", result.Output, StringComparison.Ordinal);
        Assert.Contains("| native: NativeBufferWriter<byte> | 1,000,", result.Output, StringComparison.Ordinal);
        Assert.Contains("| array: ArrayBufferWriter<byte> | 1,000,", result.Output, StringComparison.Ordinal);
        Assert.Contains("| arraypool: ArrayPoolBufferWriter<byte> | 1,000,", result.Output, StringComparison.Ordinal);
        Assert.Contains("| limit: the encoding alone (NativeBufferWriter<byte> presized, paged in first) | 1,000,", result.Output, StringComparison.Ordinal);
        Assert.Contains("the limit writes into a block of the whole document, paged in before it is timed", result.Output, StringComparison.Ordinal);
        Assert.Contains("have the reference's length and SHA-256", result.Output, StringComparison.Ordinal);
        Assert.Matches(@"io json: round 3 of 3: native [0-9.]+ s, array [0-9.]+ s, arraypool [0-9.]+ s, limit [0-9.]+ s\.", result.Output);
        Assert.Matches(@"machine limit: the encoding alone takes [0-9.]+ s \(best round\); native takes [0-9.]+x that; so no writer can be more than [0-9.]+x faster than array here", result.Output);
        Assert.DoesNotContain("time vs limit", result.Output, StringComparison.Ordinal);
        Assert.Contains("time vs array:", result.Output, StringComparison.Ordinal);
        Assert.Matches(@"time vs arraypool: [0-9.]+x faster, best against best \(no goal\) \(round by round: [0-9.]+x, [0-9.]+x, [0-9.]+x\)", result.Output);
    }

    [Fact]
    public void Presized_starts_every_writer_with_room_for_the_whole_document()
    {
        Jembench.Result result = Jembench.Run("io", "--json", "--json-size", "200KB", "--writers", "native,array", "--presized");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        (long length, _) = JsonDocumentContent.Reference(200_000);
        Assert.Contains($"Every writer starts at {length + JsonWriteHarness.Slack:N0} bytes (--presized", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("arraypool:", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void The_pipe_suite_runs_both_pools_and_checks_every_byte()
    {
        Jembench.Result result = Jembench.Run("io", "--pipe", "--pipe-size", "24MiB", "--rounds", "2");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("io pipe: round 1 of 2: jem ", result.Output, StringComparison.Ordinal);
        Assert.Contains("io pipe: round 2 of 2: jem ", result.Output, StringComparison.Ordinal);
        Assert.Contains("Best of 2 round(s) per pool", result.Output, StringComparison.Ordinal);
        Assert.Contains("| jem: JemMemoryPool | 25,165,824 |", result.Output, StringComparison.Ordinal);
        Assert.Contains("| shared: MemoryPool<byte>.Shared (default) | 25,165,824 |", result.Output, StringComparison.Ordinal);
        Assert.Contains($"XxHash3 {PipeStreamPattern.Checksum(24 << 20):X16} on every side", result.Output, StringComparison.Ordinal);
        Assert.Contains("throughput vs shared:", result.Output, StringComparison.Ordinal);
        Assert.Contains("Gen0+Gen1 collections vs shared:", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("native")]
    [InlineData("array")]
    [InlineData("arraypool")]
    [InlineData("limit")]
    public void A_json_writer_with_a_wrong_byte_fails_with_exit_code_2(string writer)
    {
        Jembench.Result result = Jembench.Run("io", "--json", "--json-size", "300KB", "--corrupt", writer);
        Assert.Equal(Program.ExitBenchmarkFailed, result.ExitCode);
        Assert.Contains("WRONG RESULT", result.Error, StringComparison.Ordinal);
        Assert.Contains($"{writer} wrote", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("results checked", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("jem", "Jem")]
    [InlineData("shared", "Shared")]
    public void A_pipe_side_with_a_wrong_byte_fails_with_exit_code_2_naming_the_byte(string pool, string side)
    {
        Jembench.Result result = Jembench.Run("io", "--pipe", "--pipe-size", "1MB", "--pools", pool, "--corrupt", pool);
        Assert.Equal(Program.ExitBenchmarkFailed, result.ExitCode);
        Assert.Contains($"WRONG RESULT: io pipe ({side}, 1,000,000 bytes): byte ", result.Error, StringComparison.Ordinal);
        Assert.Contains("differs from the byte written", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void Each_side_runs_in_its_own_jembench_process_and_the_checks_pass()
    {
        ChildProcessRunner.Result result = JembenchProcess.Run(new Dictionary<string, string?>(), ProcessTimeout,
            "io", "--json", "--pipe", "--json-size", "1MB", "--pipe-size", "16MiB");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.ToString());
        Assert.Contains("each side in its own process", result.Output, StringComparison.Ordinal);
        Assert.Contains("have the reference's length and SHA-256", result.Output, StringComparison.Ordinal);
        Assert.Contains("every byte read equals the byte written", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--json", "arraypool", "io json: WRONG RESULT")]
    [InlineData("--pipe", "jem", "WRONG RESULT: io pipe (Jem")]
    public void A_wrong_byte_in_a_side_process_fails_the_run_with_exit_code_2(string suite, string side, string message)
    {
        ChildProcessRunner.Result result = JembenchProcess.Run(new Dictionary<string, string?>(), ProcessTimeout,
            "io", suite, "--json-size", "300KB", "--pipe-size", "1MB", "--corrupt", side);
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, result.ToString());
        Assert.Contains("each side in its own process", result.Output, StringComparison.Ordinal);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void Records_sides_in_their_own_processes_still_fail_a_wrong_result_with_exit_code_2()
    {
        // records shares the side-process machinery: run as jembench, each side is a child process.
        ChildProcessRunner.Result result = JembenchProcess.Run(new Dictionary<string, string?>(), ProcessTimeout,
            "records", "--records", "65536", "--requests", "10", "--full-gcs", "0", "--side", "native,struct", "--corrupt", "native");
        Assert.True(result.ExitCode == Program.ExitBenchmarkFailed, result.ToString());
        Assert.DoesNotContain("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.Contains("WRONG RESULT", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void The_managed_writers_say_they_cannot_hold_a_document_past_one_array()
    {
        Jembench.Result result = Jembench.Run("io", "--json", "--json-size", "3GB", "--writers", "array,arraypool");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains($"array cannot hold 3,000,000,000 bytes: it writes into one .NET array, at most {Array.MaxLength:N0} bytes", result.Output, StringComparison.Ordinal);
        Assert.Contains("arraypool cannot hold 3,000,000,000 bytes: it grows its array in powers of two, to at most 1,073,741,824 bytes", result.Output, StringComparison.Ordinal);
        Assert.Contains("add --writers native", result.Output, StringComparison.Ordinal);
        Assert.False(JsonWriteHarness.CanHold(JsonWriterSide.Array, Array.MaxLength - JsonWriteHarness.Slack + 1));
        Assert.True(JsonWriteHarness.CanHold(JsonWriterSide.Array, Array.MaxLength - JsonWriteHarness.Slack));
        Assert.True(JsonWriteHarness.CanHold(JsonWriterSide.ArrayPool, (1L << 30) - JsonWriteHarness.Slack));
        Assert.False(JsonWriteHarness.CanHold(JsonWriterSide.ArrayPool, (1L << 30) - JsonWriteHarness.Slack + 1));
        Assert.True(JsonWriteHarness.CanHold(JsonWriterSide.Native, 3_000_000_000));
        Assert.Throws<ArgumentOutOfRangeException>(() => JsonWriteHarness.Run(JsonWriterSide.Array, 3_000_000_000, 4096, corrupt: false));
        Assert.Throws<ArgumentOutOfRangeException>(() => JsonWriteHarness.Run(JsonWriterSide.ArrayPool, 1_500_000_000, 4096, corrupt: false));
    }

    [Fact]
    public void A_document_that_cannot_fit_in_memory_is_refused_up_front_with_exit_code_3()
    {
        Jembench.Result result = Jembench.Run("io", "--json", "--json-size", "2TB", "--writers", "native");
        Assert.Equal(Program.ExitNotEnoughMemory, result.ExitCode);
        Assert.Contains("jembench io: a JSON document of 2,000,000,000,000 bytes needs about", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("reference", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_prints_its_result_as_json()
    {
        Jembench.Result result = Jembench.Run("io", "--child", "--json", "--writers", "native", "--json-size", "100000", "--initial-capacity", "1000");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("io-json-result: ", StringComparison.Ordinal));
        JsonWriteResult parsed = JsonSerializer.Deserialize<JsonWriteResult>(line["io-json-result: ".Length..])!;
        (long length, string sha256) = JsonDocumentContent.Reference(100_000);
        Assert.Equal(JsonWriterSide.Native, parsed.Side);
        Assert.Equal(1000, parsed.InitialCapacity);
        Assert.Equal(length, parsed.Bytes);
        Assert.Equal(sha256, parsed.Sha256);
        Assert.True(parsed.Seconds > 0);
    }

    [Fact]
    public void A_pipe_child_reports_the_pools_rents_and_the_streams_checksum()
    {
        PipePumpResult jem = PipePumpHarness.Run(PipePoolSide.Jem, 2_000_000, corrupt: false);
        PipePumpResult shared = PipePumpHarness.Run(PipePoolSide.Shared, 2_000_000, corrupt: false);
        Assert.Equal(2_000_000, jem.Bytes);
        Assert.Equal(jem.Segments, shared.Segments);
        Assert.True(jem.Rents >= 1 && jem.Rents <= jem.Segments, $"{jem.Rents} rents for {jem.Segments} segments");
        Assert.Equal(-1, shared.Rents);
        Assert.Equal(PipeStreamPattern.Checksum(2_000_000), jem.Checksum);
        Assert.Equal(jem.Checksum, shared.Checksum);
        Assert.Throws<BenchmarkVerificationException>(() => PipePumpHarness.Run(PipePoolSide.Shared, 200_000, corrupt: true));
    }

    [Fact]
    public void The_stream_pattern_finds_the_first_wrong_byte_and_its_segments_stay_in_range()
    {
        byte[] data = new byte[200_000];
        PipeStreamPattern.Fill(data, 12_345);
        Assert.Equal(-1, PipeStreamPattern.FirstMismatch(data, 12_345));
        data[150_000] ^= 1;
        Assert.Equal(150_000, PipeStreamPattern.FirstMismatch(data, 12_345));
        Assert.NotEqual(-1, PipeStreamPattern.FirstMismatch(data.AsSpan(0, 10), 12_346));
        for (long i = 0; i < 10_000; i++)
        {
            Assert.InRange(PipeStreamPattern.SegmentSize(i), PipeStreamPattern.MinSegment, PipeStreamPattern.MaxSegment);
        }
    }

    [Theory]
    [InlineData("100MB", 100_000_000)]
    [InlineData("3GB", 3_000_000_000)]
    [InlineData("4 GB", 4_000_000_000)]
    [InlineData("64KiB", 65_536)]
    [InlineData("2gib", 2_147_483_648)]
    [InlineData("12345", 12_345)]
    [InlineData("7B", 7)]
    public void Sizes_take_decimal_and_binary_units(string text, long bytes) =>
        Assert.Equal(bytes, IoCommand.ParseSize("--json-size", text));

    [Theory]
    [InlineData("choose what to benchmark: --json or --pipe", "io")]
    [InlineData("--json-size must be at least 1 byte; got '0'", "io", "--json", "--json-size", "0")]
    [InlineData("--json-size '12XB' is not a size", "io", "--json", "--json-size", "12XB")]
    [InlineData("--json-size '-5MB' is not a size", "io", "--json", "--json-size", "-5MB")]
    [InlineData("--pipe-size '99999999TB' is too large", "io", "--pipe", "--pipe-size", "99999999TB")]
    [InlineData("the --json-size 8,000,000,000,000,000,000 is out of range", "io", "--json", "--json-size", "8000000TB")]
    [InlineData("unknown side 'stream' in --writers; the sides are native, array, arraypool", "io", "--json", "--writers", "stream")]
    [InlineData("unknown side 'pinned' in --pools; the sides are jem, shared", "io", "--pipe", "--pools", "pinned")]
    [InlineData("--corrupt names no side", "io", "--json", "--corrupt", "nothing")]
    [InlineData("--initial-capacity 3,000,000,000 is more than a managed writer's array can hold", "io", "--json", "--json-size", "1MB", "--initial-capacity", "3GB")]
    [InlineData("a --child runs one suite", "io", "--child", "--json", "--pipe", "--writers", "native", "--pools", "jem")]
    [InlineData("a --child runs one suite", "io", "--child", "--json")]
    [InlineData("--rounds must be at least 1; got 0", "io", "--pipe", "--rounds", "0")]
    public void Bad_options_are_refused_with_exit_code_1(string message, params string[] args)
    {
        Jembench.Result result = Jembench.Run(args);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("io", result.Error, StringComparison.Ordinal);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", result.All, StringComparison.Ordinal);
    }

    [Fact]
    public void Help_lists_the_suites_and_their_options()
    {
        Jembench.Result result = Jembench.Run("io", "--help");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        foreach (string option in new[] { "--json", "--pipe", "--json-size", "--pipe-size", "--writers", "--pools", "--initial-capacity", "--presized", "--rounds", "--in-process" })
        {
            Assert.Contains(option, result.Output, StringComparison.Ordinal);
        }

        Assert.DoesNotContain("--corrupt", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("--child", result.Output, StringComparison.Ordinal);
    }
}
