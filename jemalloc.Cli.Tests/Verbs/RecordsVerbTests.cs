using System.Text.Json;
using jemalloc.Benchmarks.Records;
using jemalloc.Cli.Commands;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public class RecordsVerbTests
{
    private const string Tiny = "65536";

    [Fact]
    public void Runs_all_three_sides_and_checks_their_results_equal()
    {
        Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "40", "--full-gcs", "2");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("this process is not jembench", result.Output, StringComparison.Ordinal);
        Assert.Contains("| class |", result.Output, StringComparison.Ordinal);
        Assert.Contains("| struct |", result.Output, StringComparison.Ordinal);
        Assert.Contains("| native |", result.Output, StringComparison.Ordinal);
        Assert.Contains("max GC pause vs class:", result.Output, StringComparison.Ordinal);
        Assert.Contains("scan rows/s vs struct:", result.Output, StringComparison.Ordinal);
        Assert.Contains("build time vs struct:", result.Output, StringComparison.Ordinal);
        Assert.Matches(@"native / best managed side, per figure .*: build [0-9.]+x \((class|struct)\), .*scan rows/s [0-9.]+x \((class|struct)\)", result.Output);
        Assert.Matches(OperatingSystem.IsLinux() ? @"records: load average \(1 min\) during the run: [0-9.]+ to [0-9.]+ over [0-9]+ samples, on [0-9]+ cores\." : "records: load average: not available", result.Output);
        Assert.Contains("p99.9 latency vs class:", result.Output, StringComparison.Ordinal);
        Assert.Contains("| p99.9 (us) |", result.Output, StringComparison.Ordinal);
        Assert.Contains("every side gave the same results", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("native")]
    [InlineData("class")]
    public void A_side_with_a_wrong_result_fails_with_exit_code_2(string side)
    {
        Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "10", "--full-gcs", "0", "--side", $"{side},struct", "--corrupt", side);
        Assert.Equal(Program.ExitBenchmarkFailed, result.ExitCode);
        Assert.Contains("WRONG RESULT", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void One_side_alone_checks_its_lookups_and_says_the_cross_check_needs_two()
    {
        Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "10", "--side", "native", "--full-gcs", "1");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("run two or more sides", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("| class |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_prints_its_result_as_json()
    {
        Jembench.Result result = Jembench.Run("records", "--child", "--side", "struct", "--records", Tiny, "--requests", "5", "--full-gcs", "1");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("records-result: ", StringComparison.Ordinal));
        RecordsResult parsed = JsonSerializer.Deserialize<RecordsResult>(line["records-result: ".Length..])!;
        Assert.Equal(RecordsSide.Struct, parsed.Side);
        Assert.Equal(65536, parsed.Records);
        Assert.Equal(5, parsed.Requests);
        Assert.True(parsed.Gen2 >= 1);
        Assert.True(parsed.LookupsPerSecond > 0 && parsed.ScanRowsPerSecond > 0 && parsed.P50Us > 0);
        Assert.True(parsed.P50Us <= parsed.P99Us && parsed.P99Us <= parsed.P999Us && parsed.P999Us <= parsed.MaxUs);
    }

    [Fact]
    public void Plot_writes_an_svg_chart_naming_every_side()
    {
        string path = Path.Combine(Path.GetTempPath(), $"records-{Guid.NewGuid():N}.svg");
        try
        {
            Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "10", "--full-gcs", "1", "--side", "class,native", "--plot", path);
            Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
            Assert.Contains($"chart written to {path}", result.Output, StringComparison.Ordinal);
            var svg = System.Xml.Linq.XDocument.Load(path);
            Assert.Equal("svg", svg.Root!.Name.LocalName);
            string text = string.Concat(svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value));
            Assert.Contains("class", text, StringComparison.Ordinal);
            Assert.Contains("native", text, StringComparison.Ordinal);
            Assert.DoesNotContain("struct", text, StringComparison.Ordinal);
            Assert.Contains("p99 request latency", text, StringComparison.Ordinal);
            Assert.Contains("longest GC pause", text, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void Plot_writes_a_png_chart()
    {
        string path = Path.Combine(Path.GetTempPath(), $"records-{Guid.NewGuid():N}.PNG");
        try
        {
            Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "10", "--full-gcs", "1", "--side", "native", "--plot", path);
            Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
            byte[] bytes = File.ReadAllBytes(path);
            Assert.True(bytes.Length > 1000, $"{bytes.Length} bytes");
            Assert.Equal(new byte[] { 0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A }, bytes[..8]);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Theory]
    [InlineData("chart.txt", "the extension '.txt'")]
    [InlineData("chart", "no extension")]
    [InlineData("no-such-folder/chart.svg", "does not exist")]
    [InlineData("", "is a folder")]
    public void A_bad_plot_path_is_refused_before_anything_runs(string relative, string message)
    {
        string folder = Path.Combine(Path.GetTempPath(), $"records-{Guid.NewGuid():N}");
        Directory.CreateDirectory(folder);
        try
        {
            string path = relative.Length == 0 ? Directory.CreateDirectory(Path.Combine(folder, "d.svg")).FullName : Path.Combine(folder, relative);
            Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "10", "--plot", path);
            Assert.Equal(Program.ExitBadArguments, result.ExitCode);
            Assert.Contains("--plot", result.Error, StringComparison.Ordinal);
            Assert.Contains(message, result.Error, StringComparison.Ordinal);
            Assert.DoesNotContain("| native |", result.Output, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public void A_chart_that_cannot_be_written_is_a_clear_error_after_the_run()
    {
        // /proc exists, so the path passes the check before the run, but no file can be made in it (not even by root).
        const string path = "/proc/records-chart.svg";
        Jembench.Result result = Jembench.Run("records", "--records", Tiny, "--requests", "5", "--full-gcs", "0", "--side", "native", "--plot", path);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("| native |", result.Output, StringComparison.Ordinal);
        Assert.Contains($"the chart could not be written to '{path}'", result.Error, StringComparison.Ordinal);
        Assert.Throws<CommandLineException>(() => RecordsChart.Write([], "/no-such-folder/chart.png"));
    }

    [Theory]
    [InlineData("--records", "100")]
    [InlineData("--requests", "0")]
    [InlineData("--side", "arrays")]
    [InlineData("--full-gcs", "-1")]
    [InlineData("--records", "3000000000")]
    public void Bad_options_are_refused_with_exit_code_1(string option, string value)
    {
        string[] args = option == "--requests" ? ["records", option, value] : ["records", option, value, "--requests", "10"];
        Jembench.Result result = Jembench.Run(args);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("records:", result.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false, "found nothing")]
    [InlineData(true, "wrong record")]
    public void A_wrong_lookup_is_a_wrong_result(bool finds, string message)
    {
        // The harness checks every lookup against the source data, so even one side alone catches it.
        long[] ids = [1000];
        var found = new RecordLookup[1];
        new WrongTable(finds).Lookup(ids, found);
        var e = Assert.Throws<jemalloc.Benchmarks.Infrastructure.BenchmarkVerificationException>(
            () => RecordsHarness.CheckLookups(RecordsSide.Struct, ids, found));
        Assert.Contains("id 1000", e.Message, StringComparison.Ordinal);
        Assert.Contains(message, e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(RecordsSide.Class)]
    [InlineData(RecordsSide.Struct)]
    [InlineData(RecordsSide.Native)]
    public void Every_side_finds_the_records_of_a_batch_and_misses_unknown_ids(RecordsSide side)
    {
        using IRecordTable table = side switch
        {
            RecordsSide.Class => new ClassRecordTable(65536),
            RecordsSide.Struct => new StructRecordTable(65536),
            _ => new NativeRecordTable(65536),
        };
        long[] ids = [RecordData.IdOf(5), RecordData.IdOf(65535), RecordData.IdOf(0), 7, RecordData.IdOf(65536)];
        var found = new RecordLookup[ids.Length];
        table.Lookup(ids, found);
        RecordsHarness.CheckLookups(side, ids.AsSpan(0, 3), found.AsSpan(0, 3));
        Assert.Equal(RecordData.CategoryOf(ids[0]), found[0].Category);
        Assert.False(found[3].Found);
        Assert.False(found[4].Found);
        Assert.Throws<jemalloc.Benchmarks.Infrastructure.BenchmarkVerificationException>(() => RecordsHarness.CheckLookups(side, ids, found));
    }

    private sealed class WrongTable(bool finds) : IRecordTable
    {
        public long Count => 1;

        public void Lookup(ReadOnlySpan<long> ids, Span<RecordLookup> results)
        {
            for (int i = 0; i < ids.Length; i++)
            {
                results[i] = new RecordLookup(finds, RecordData.CategoryOf(ids[i]) + 1, RecordData.ScoreOf(ids[i]), RecordData.UpdatedOf(ids[i]));
            }
        }

        public string NameOf(long id) => "";

        public int Scan(long start, int count, double min, double max, int prefix, ref long idSum) => 0;

        public void Rename(long row, string name)
        {
        }

        public void Dispose()
        {
        }
    }
}
