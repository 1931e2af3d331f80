using System.Text.Json;
using jemalloc.Cli.Columnar;
using jemalloc.Cli.Commands;
using jemalloc.Cli.Strings;
using jemalloc.Cli.Tests.Benchmarks;
using jemalloc.Parquet;
using ParquetSharp;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public sealed class StringsVerbTests(StringsTableFixture table) : IClassFixture<StringsTableFixture>, IDisposable
{
    private const string Rows = "20011";

    private readonly string _folder = Directory.CreateTempSubdirectory("strings-tests-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public void Runs_all_four_sides_checks_their_results_and_deletes_the_file()
    {
        Jembench.Result result = Jembench.Run("strings", "--rows", Rows, "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.Contains("strings: 20,011 rows (id, category, region, note, amount), Zstd Parquet; filter: note starts with 'Überfällig:'", result.Output, StringComparison.Ordinal);
        foreach (string side in new[] { "managed", "native-4k", "native-huge", "decode" })
        {
            Assert.Contains($"| {side} |", result.Output, StringComparison.Ordinal);
        }

        Assert.Contains("| Peak RSS (MiB) | GCs 0/1/2 | GC pauses (ms) | Longest GC pause (ms) | String load (s) | String load (MB/s) |", result.Output, StringComparison.Ordinal);
        Assert.Contains("strings: load average (1 min) during the run:", result.Output, StringComparison.Ordinal);
        Assert.Contains("native-huge gen-2 collections:", result.Output, StringComparison.Ordinal);
        Assert.Contains("native-huge speed vs managed (managed wall / native-huge wall):", result.Output, StringComparison.Ordinal);
        Assert.Contains("peak RSS, native-huge / managed:", result.Output, StringComparison.Ordinal);
        Assert.Contains("longest GC pause, native-4k / managed:", result.Output, StringComparison.Ordinal);
        Assert.Contains("string column read throughput, native-4k vs managed", result.Output, StringComparison.Ordinal);
        Assert.Contains("decoder limit: managed loads the string columns at", result.Output, StringComparison.Ordinal);
        Assert.Contains("| decode | ", result.Output, StringComparison.Ordinal);
        Assert.Contains(" | (in load) | (in load) | ", result.Output, StringComparison.Ordinal);
        Assert.Contains("strings: results checked: every side kept", result.Output, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void One_side_runs_alone_with_another_codec_and_no_goals_against_managed()
    {
        Jembench.Result result = Jembench.Run("strings", "--rows", "999", "--side", "native-huge", "--codec", "snappy", "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("Snappy Parquet", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("| managed |", result.Output, StringComparison.Ordinal);
        Assert.Contains("native-huge gen-2 collections: 0 (goal 0): met", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("speed vs managed", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(StringsSide.Managed)]
    [InlineData(StringsSide.Native4K)]
    [InlineData(StringsSide.NativeHuge)]
    [InlineData(StringsSide.Decode)]
    public void A_child_prints_its_result_as_json_with_the_references_figures_and_frees_its_columns(StringsSide side)
    {
        long liveCount = AllocationLedger.LiveCount, liveBytes = AllocationLedger.LiveBytes;
        Jembench.Result result = Jembench.Run("strings", "--child-file", table.Path, "--side", StringsCommand.Name(side));
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("strings-result: ", StringComparison.Ordinal));
        StringsResult parsed = JsonSerializer.Deserialize<StringsResult>(line["strings-result: ".Length..])!;
        Assert.Equal(side, parsed.Side);
        Assert.Equal(StringsTableFixture.Rows, parsed.Rows);
        Assert.Empty(table.Reference.Differences(parsed));
        Assert.Equal(table.Reference.Groups, parsed.Groups);
        Assert.True(parsed.LoadSeconds >= parsed.StringLoadSeconds && parsed.StringLoadSeconds > 0, line);
        Assert.True(parsed.UserSeconds > 0, line);
        Assert.Equal(side != StringsSide.Decode, parsed.FilterSeconds > 0 && parsed.GroupSeconds > 0);
        Assert.True(parsed.MinorFaults > 0 && parsed.PeakRssBytes > 0, line);
        Assert.True(parsed.LongestGcPauseMs >= 0 && parsed.TotalGcPauseMs >= 0, line);
        if (side != StringsSide.Managed)
        {
            // No managed object per row: no collection at all, in the test host too.
            Assert.Equal(0, parsed.Gen2);
        }
    }

    [Theory]
    [InlineData(StringsSide.Managed)]
    [InlineData(StringsSide.Native4K)]
    [InlineData(StringsSide.Decode)]
    public void A_file_without_the_tables_columns_is_refused_naming_the_file_and_column(StringsSide side)
    {
        string path = Path.Combine(_folder, "doubles.parquet");
        ColumnarData.Write(path, 2, 100, Compression.Zstd);
        Jembench.Result result = Jembench.Run("strings", "--child-file", path, "--side", StringsCommand.Name(side));
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains($"strings: the {StringsCommand.Name(side)} side cannot run on '{path}':", result.Error, StringComparison.Ordinal);
        Assert.Contains("'id'", result.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(StringsSide.Managed)]
    [InlineData(StringsSide.Native4K)]
    [InlineData(StringsSide.NativeHuge)]
    [InlineData(StringsSide.Decode)]
    public void A_string_column_of_another_type_is_refused_and_frees_what_was_read(StringsSide side)
    {
        // The table's five columns, but category holds numbers.
        string path = Path.Combine(_folder, "wrong-type.parquet");
        using (var ids = new HugeArray<long>(100))
        using (var numbers = new HugeArray<long>(100))
        using (NativeStringColumn regions = Strings(100))
        using (NativeStringColumn notes = Strings(100))
        using (var amounts = new DecimalColumn(new HugeArray<Int128>(100), null, 100, 18, 2))
        {
            new NativeParquetWriter().Add("id", ids).Add("category", numbers).Add("region", regions).Add("note", notes).Add("amount", amounts).Write(path);
        }

        long liveCount = AllocationLedger.LiveCount, liveBytes = AllocationLedger.LiveBytes;
        Jembench.Result result = Jembench.Run("strings", "--child-file", path, "--side", StringsCommand.Name(side));
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains($"strings: the {StringsCommand.Name(side)} side cannot run on '{path}':", result.Error, StringComparison.Ordinal);
        Assert.Contains("category", result.Error, StringComparison.Ordinal);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
    }

    [Theory]
    [InlineData("--rows must be from 1 to 2,147,483,591", "--rows", "0")]
    [InlineData("--rows must be from 1 to 2,147,483,591", "--rows", "-3")]
    [InlineData("--rows must be from 1 to 2,147,483,591", "--rows", "2147483592")]
    [InlineData("unknown --codec 'zip'", "--codec", "zip")]
    [InlineData("unknown side 'arrays'", "--side", "arrays")]
    [InlineData("--dir", "--dir", "no-such-folder")]
    [InlineData("no positional values", "extra")]
    public void Bad_options_are_refused_with_exit_code_1_before_anything_runs(string message, params string[] options)
    {
        var args = new List<string> { "strings" };
        if (!options.Contains("--rows"))
        {
            args.AddRange(["--rows", Rows]);
        }

        args.AddRange(options.Select(o => o == "no-such-folder" ? Path.Combine(_folder, o) : o));
        Jembench.Result result = Jembench.Run([.. args]);
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("generated and wrote", result.Output, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void A_table_that_cannot_fit_is_refused_with_exit_code_3()
    {
        Jembench.Result result = Jembench.Run("strings", "--rows", "2147483591", "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitNotEnoughMemory, result.All);
        Assert.Contains("jembench strings: a table of 2,147,483,591 rows with three string columns needs about", result.Error, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void A_folder_the_file_cannot_be_written_to_is_a_clear_error()
    {
        // /proc exists, so --dir passes the check before the run, but no file can be made in it (not even by root).
        Jembench.Result result = Jembench.Run("strings", "--rows", "1000", "--dir", "/proc");
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains("strings: the Parquet file could not be written to '/proc/jembench-strings-", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("| managed |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_asked_for_two_sides_is_refused()
    {
        Jembench.Result result = Jembench.Run("strings", "--child-file", Path.Combine(_folder, "x.parquet"), "--side", "managed,native-4k");
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("exactly one side", result.Error, StringComparison.Ordinal);
    }

    private static NativeStringColumn Strings(int rows)
    {
        using var builder = new NativeStringColumnBuilder();
        for (int i = 0; i < rows; i++)
        {
            builder.Append($"text {i}");
        }

        return builder.Build();
    }
}
