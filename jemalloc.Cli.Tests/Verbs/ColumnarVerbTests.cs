using System.Text.Json;
using jemalloc.Cli.Columnar;
using jemalloc.Cli.Commands;
using ParquetSharp;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public sealed class ColumnarVerbTests : IDisposable
{
    private const string Rows = "100003";

    private readonly string _folder = Directory.CreateTempSubdirectory("columnar-tests-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public void Runs_all_four_sides_checks_their_sums_and_deletes_the_file()
    {
        Jembench.Result result = Jembench.Run("columnar", "--columns", "3", "--rows", Rows, "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("this process is not jembench", result.Output, StringComparison.Ordinal);
        foreach (string side in new[] { "managed", "native-4k", "native-huge", "decode" })
        {
            Assert.Contains($"| {side} |", result.Output, StringComparison.Ordinal);
        }

        Assert.Contains("| Minor faults | Major faults | Voluntary switches | Involuntary switches | Peak RSS (MiB) | GCs 0/1/2 |", result.Output, StringComparison.Ordinal);
        Assert.Contains("native-huge gen-2 collections:", result.Output, StringComparison.Ordinal);
        Assert.Contains("page faults, managed / native-huge:", result.Output, StringComparison.Ordinal);
        Assert.Contains("Parquet read throughput, native-4k vs managed", result.Output, StringComparison.Ordinal);
        Assert.Contains("decoder limit: native-huge loads at", result.Output, StringComparison.Ordinal);
        Assert.Contains("every side's 3 column sums and 100,003 row sums match the reference", result.Output, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void Rows_default_to_what_fits_in_the_budget()
    {
        // 2 columns of 8 bytes in 160,000 bytes: 10,000 rows.
        Jembench.Result result = Jembench.Run("columnar", "--columns", "2", "--budget", "160KB", "--side", "native-4k", "--codec", "snappy", "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("2 columns x 10,000 rows of doubles", result.Output, StringComparison.Ordinal);
        Assert.Contains("Snappy Parquet", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("| managed |", result.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(ColumnarSide.Managed)]
    [InlineData(ColumnarSide.Native4K)]
    [InlineData(ColumnarSide.NativeHuge)]
    [InlineData(ColumnarSide.Decode)]
    public void A_child_prints_its_result_as_json_with_the_sums_of_the_data(ColumnarSide side)
    {
        // Rows not a multiple of the chunk, the vector width or the row group; several row groups.
        const int columns = 3;
        const long rows = (1L << 20) + 70_001;
        string path = Path.Combine(_folder, "data.parquet");
        ColumnarReference reference = ColumnarData.Write(path, columns, rows, Compression.Zstd);
        Jembench.Result result = Jembench.Run("columnar", "--child-file", path, "--side", ColumnarCommand.Name(side));
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("columnar-result: ", StringComparison.Ordinal));
        ColumnarResult parsed = JsonSerializer.Deserialize<ColumnarResult>(line["columnar-result: ".Length..])!;
        Assert.Equal(side, parsed.Side);
        Assert.Equal(columns, parsed.Columns);
        Assert.Equal(rows, parsed.Rows);
        Assert.Empty(reference.Differences(parsed));
        // The sums computed here value by value, apart from the kernels and the reference.
        for (int c = 0; c < columns; c++)
        {
            double sum = 0;
            for (long r = 0; r < rows; r++)
            {
                sum += ColumnarData.ValueOf(c, r);
            }

            Assert.Equal(sum, parsed.ColumnSums[c]);
        }

        Assert.True(parsed.LoadSeconds > 0 && parsed.UserSeconds > 0, line);
        Assert.True(parsed.MinorFaults > 0 && parsed.PeakRssBytes > 0, line);
        Assert.Equal(side == ColumnarSide.Decode ? 0 : 1, parsed.SumSeconds > 0 ? 1 : 0);
    }

    [Fact]
    public void Plot_writes_an_svg_chart_naming_every_side()
    {
        string path = Path.Combine(_folder, "chart.svg");
        Jembench.Result result = Jembench.Run("columnar", "--columns", "2", "--rows", Rows, "--side", "managed,native-huge", "--dir", _folder, "--plot", path);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains($"chart written to {path}", result.Output, StringComparison.Ordinal);
        var svg = System.Xml.Linq.XDocument.Load(path);
        Assert.Equal("svg", svg.Root!.Name.LocalName);
        string text = string.Concat(svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value));
        Assert.Contains("managed", text, StringComparison.Ordinal);
        Assert.Contains("native-huge", text, StringComparison.Ordinal);
        Assert.DoesNotContain("native-4k", text, StringComparison.Ordinal);
        Assert.Contains("load (Parquet to columns)", text, StringComparison.Ordinal);
        Assert.Contains("gen2", text, StringComparison.Ordinal);
    }

    [Fact]
    public void Plot_writes_a_png_chart()
    {
        string path = Path.Combine(_folder, "chart.PNG");
        Jembench.Result result = Jembench.Run("columnar", "--columns", "1", "--rows", Rows, "--side", "decode", "--dir", _folder, "--plot", path);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        byte[] bytes = File.ReadAllBytes(path);
        Assert.Equal(new byte[] { 0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A }, bytes[..8]);
    }

    [Theory]
    [InlineData("the extension '.txt'", "--plot", "chart.txt")]
    [InlineData("--columns must be from 1 to 1024", "--columns", "0")]
    [InlineData("--columns must be from 1 to 1024", "--columns", "1025")]
    [InlineData("--rows must be at least 1", "--rows", "-1")]
    [InlineData("more than 8,589,934,592", "--rows", "8589934593")]
    [InlineData("does not hold one row", "--budget", "8", "--rows", "0")]
    [InlineData("is not a size", "--budget", "lots")]
    [InlineData("more than --budget 1MB", "--budget", "1MB")]
    [InlineData("unknown --codec 'zip'", "--codec", "zip")]
    [InlineData("unknown side 'arrays'", "--side", "arrays")]
    [InlineData("--dir", "--dir", "no-such-folder")]
    [InlineData("at most 2,147,483,591 rows", "--side", "managed", "--rows", "3000000000", "--budget", "1TB")]
    public void Bad_options_are_refused_with_exit_code_1_before_anything_runs(string message, params string[] options)
    {
        // The options given, and --columns 2 --rows 100003 where they do not say otherwise.
        var args = new List<string> { "columnar" };
        foreach ((string name, string value) in new[] { ("--columns", "2"), ("--rows", Rows) })
        {
            if (!options.Contains(name))
            {
                args.AddRange([name, value]);
            }
        }

        args.AddRange(options.Select(o => o.StartsWith("chart", StringComparison.Ordinal) || o == "no-such-folder" ? Path.Combine(_folder, o) : o));
        Jembench.Result result = Jembench.Run([.. args]);
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains("columnar:", result.Error, StringComparison.Ordinal);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("generated and wrote", result.Output, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void Past_2_to_the_31_rows_the_managed_side_says_it_cannot_and_the_rest_are_accepted()
    {
        // 1024 columns of 3e9 rows: accepted by the options, refused only by the memory check on any machine.
        Jembench.Result result = Jembench.Run("columnar", "--columns", "1024", "--rows", "3000000000", "--budget", "30TiB", "--dir", _folder);
        Assert.True(result.ExitCode == Program.ExitNotEnoughMemory, result.All);
        Assert.Contains("managed: not run: 3,000,000,000 rows is more than one .NET array holds", result.Output, StringComparison.Ordinal);
        Assert.Contains("jembench columnar: 1024 columns of 3,000,000,000 doubles needs about", result.Error, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder));
    }

    [Fact]
    public void A_folder_the_file_cannot_be_written_to_is_a_clear_error()
    {
        // /proc exists, so --dir passes the check before the run, but no file can be made in it (not even by root).
        Jembench.Result result = Jembench.Run("columnar", "--columns", "1", "--rows", "1000", "--dir", "/proc");
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains("columnar: the Parquet file could not be written to '/proc/jembench-columnar-", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("| managed |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_chart_that_cannot_be_written_is_a_clear_error_after_the_run()
    {
        // /proc exists, so the path passes the check before the run, but no file can be made in it.
        const string path = "/proc/columnar-chart.svg";
        Jembench.Result result = Jembench.Run("columnar", "--columns", "1", "--rows", "1000", "--side", "decode", "--dir", _folder, "--plot", path);
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains("| decode |", result.Output, StringComparison.Ordinal);
        Assert.Contains($"columnar: the chart could not be written to '{path}'", result.Error, StringComparison.Ordinal);
        Assert.Throws<CommandLineException>(() => ColumnarChart.Write([], "/no-such-folder/chart.png"));
    }

    [Fact]
    public void A_child_asked_for_two_sides_is_refused()
    {
        Jembench.Result result = Jembench.Run("columnar", "--child-file", Path.Combine(_folder, "x.parquet"), "--side", "managed,decode");
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("exactly one side", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void Page_checksums_are_written_and_verified_unless_no_page_checksums_is_given()
    {
        Jembench.Result verified = Jembench.Run("columnar", "--columns", "1", "--rows", "5000", "--side", "native-4k,managed", "--dir", _folder);
        Assert.True(verified.ExitCode == Program.ExitSuccess, verified.All);
        Assert.Contains("page checksums written and verified", verified.Output, StringComparison.Ordinal);

        Jembench.Result off = Jembench.Run("columnar", "--columns", "1", "--rows", "5000", "--side", "native-4k,managed", "--dir", _folder, "--no-page-checksums");
        Assert.True(off.ExitCode == Program.ExitSuccess, off.All);
        Assert.Contains("page checksums off", off.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(ColumnarSide.Managed)]
    [InlineData(ColumnarSide.Native4K)]
    [InlineData(ColumnarSide.NativeHuge)]
    [InlineData(ColumnarSide.Decode)]
    public void Every_side_verifies_the_page_checksums_so_a_damaged_page_fails_it(ColumnarSide side)
    {
        string path = Path.Combine(_folder, "damaged.parquet");
        ColumnarData.Write(path, 1, 5000, Compression.Uncompressed);
        // The file's one column chunk follows its 4-byte magic; its last byte is inside its last page's payload.
        long chunkBytes;
        using (var reader = new ParquetFileReader(path))
        using (RowGroupReader group = reader.RowGroup(0))
        using (ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(0))
        {
            chunkBytes = chunk.TotalCompressedSize;
        }

        byte[] file = File.ReadAllBytes(path);
        file[4 + chunkBytes - 1] ^= 0x10;
        File.WriteAllBytes(path, file);

        // A child runs in this process here, so its failure arrives as the exception: the native sides'
        // InvalidDataException naming the column, ParquetSharp's own on the others.
        Exception error = Assert.ThrowsAny<Exception>(() => Jembench.Run("columnar", "--child-file", path, "--side", ColumnarCommand.Name(side)));
        Assert.Contains("CRC checksum verification failed", error.Message, StringComparison.Ordinal);
        if (side is ColumnarSide.Native4K or ColumnarSide.NativeHuge)
        {
            Assert.IsType<InvalidDataException>(error);
            Assert.Contains("'c0'", error.Message, StringComparison.Ordinal);
        }
        else
        {
            Assert.IsType<ParquetException>(error);
        }
    }
}
