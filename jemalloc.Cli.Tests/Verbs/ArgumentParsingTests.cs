using CommandLine;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public class ArgumentParsingTests
{
    private static T Parsed<T>(params string[] args)
    {
        ParserResult<object> result = Program.Parse(args);
        Assert.IsType<Parsed<object>>(result);
        return Assert.IsType<T>(result.Value);
    }

    [Fact]
    public void Readme_malloc_command_parses_to_byte_fragmentation_cold_start()
    {
        var options = Parsed<MallocOptions>("malloc", "--fragment", "100", "-u", "-b", "--cold-start");
        Assert.True(options.Fragment);
        Assert.False(options.Fill);
        Assert.True(options.ColdStart);
        Assert.Equal([100L], options.Sizes);
        Assert.Equal(typeof(byte), options.ResolveElementType("malloc"));
    }

    [Fact]
    public void Readme_array_command_parses_to_two_uint64_fill_sizes()
    {
        var options = Parsed<ArrayOptions>("array", "--fill", "10000000", "100000000", "-l", "-u");
        Assert.True(options.Fill);
        Assert.Equal([10_000_000L, 100_000_000L], options.Sizes);
        Assert.Equal(typeof(ulong), options.ResolveElementType("array"));
    }

    [Fact]
    public void Readme_hugearray_fill_command_parses_a_size_beyond_int32()
    {
        var options = Parsed<HugeArrayOptions>("hugearray", "--fill", "-i", "4200000000");
        Assert.True(options.Fill);
        Assert.Equal([4_200_000_000L], options.Sizes);
        Assert.Equal(typeof(int), options.ResolveElementType("hugearray"));
    }

    [Fact]
    public void Readme_hugearray_math_command_parses_target_count_and_cold_start()
    {
        var options = Parsed<HugeArrayOptions>("hugearray", "-l", "-u", "--math", "--cold-start", "-t", "3", "4096000000");
        Assert.True(options.Math);
        Assert.True(options.ColdStart);
        Assert.Equal(3, options.TargetCount);
        Assert.Equal([4_096_000_000L], options.Sizes);
        Assert.Equal(typeof(ulong), options.ResolveElementType("hugearray"));
        RunSettings settings = options.ToRunSettings();
        Assert.True(settings.ColdStart);
        Assert.Equal(3, settings.TargetCount);
    }

    [Fact]
    public void Aliases_safe_and_huge_select_the_array_and_hugearray_verbs()
    {
        Assert.IsType<ArrayOptions>(Program.Parse(["safe", "--fill", "-i"]).Value);
        Assert.IsType<HugeArrayOptions>(Program.Parse(["huge", "--fill", "-i"]).Value);
    }

    [Theory]
    [InlineData(new[] { "-b" }, typeof(sbyte))]
    [InlineData(new[] { "-b", "-u" }, typeof(byte))]
    [InlineData(new[] { "-h" }, typeof(short))]
    [InlineData(new[] { "-h", "-u" }, typeof(ushort))]
    [InlineData(new[] { "-i" }, typeof(int))]
    [InlineData(new[] { "-i", "-u" }, typeof(uint))]
    [InlineData(new[] { "-l" }, typeof(long))]
    [InlineData(new[] { "-l", "-u" }, typeof(ulong))]
    [InlineData(new[] { "-f" }, typeof(float))]
    [InlineData(new[] { "-d" }, typeof(double))]
    [InlineData(new[] { "--udt" }, typeof(Employee))]
    public void Type_flags_select_the_element_type(string[] flags, Type expected)
    {
        var options = Parsed<ArrayOptions>(["array", "--fill", .. flags]);
        Assert.Equal(expected, options.ResolveElementType("array"));
    }

    [Fact]
    public void Run_shape_options_reach_the_run_settings()
    {
        var options = Parsed<MallocOptions>("malloc", "--fill", "-i", "--once", "--quick", "--conf", "narenas:2", "-e", "csv,html", "--artifacts", "results", "1000");
        RunSettings settings = options.ToRunSettings();
        Assert.True(settings.Once);
        Assert.True(settings.Quick);
        Assert.Equal("narenas:2", settings.Conf);
        Assert.Equal(ExportFormats.Csv | ExportFormats.Html, settings.Exporters);
        Assert.Equal(Path.GetFullPath("results"), settings.ArtifactsPath);
        Assert.Equal([1000L], options.Sizes);
    }

    [Fact]
    public void Exporters_default_to_all_formats_and_to_none_in_quick_mode()
    {
        Assert.Equal(ExportFormats.All, Parsed<MallocOptions>("malloc", "--fill", "-i").ToRunSettings().Exporters);
        Assert.Equal(ExportFormats.None, Parsed<MallocOptions>("malloc", "--fill", "-i", "--quick").ToRunSettings().Exporters);
        Assert.Equal(ExportFormats.Markdown, Parsed<MallocOptions>("malloc", "--fill", "-i", "-e", "md").ToRunSettings().Exporters);
    }

    [Fact]
    public void Micro_and_alloc_and_info_options_parse()
    {
        Assert.Equal("*Fixed*", Parsed<MicroOptions>("micro", "--filter", "*Fixed*").Filter);
        Assert.Equal(["*Fixed*", "*Indexer*"], Parsed<MicroOptions>("micro", "*Fixed*", "*Indexer*", "-t", "5").Patterns);
        Assert.True(Parsed<AllocOptions>("alloc", "--in-process", "64").InProcess);
        Assert.Equal([64L], Parsed<AllocOptions>("alloc", "--in-process", "64").Sizes);
        Assert.True(Parsed<InfoOptions>("info", "--json").Json);
        Assert.True(Parsed<VectorOptions>("vector", "-d", "32").DoublePrecision);
    }

    [Fact]
    public void Alloc_thread_counts_parse_and_leave_the_counts_after_them_positional()
    {
        var options = Parsed<AllocOptions>("alloc", "--threads", "1,2,4", "2048");
        Assert.Equal([1, 2, 4], options.ThreadCounts());
        Assert.Equal([2048L], options.Sizes);
        Assert.Equal([2, 1], Parsed<AllocOptions>("alloc", "--threads", "2, 2,1").ThreadCounts());
        Assert.Empty(Parsed<AllocOptions>("alloc", "64").ThreadCounts());
    }

    [Fact]
    public void List_options_take_one_comma_separated_value()
    {
        Assert.Equal("class,native", Parsed<RecordsOptions>("records", "--side", "class,native").Sides);
        Assert.Equal("managed,decode", Parsed<ColumnarOptions>("columnar", "--side", "managed,decode").Sides);
        var io = Parsed<IoOptions>("io", "--writers", "native,array", "--pools", "jem");
        Assert.Equal("native,array", io.Writers);
        Assert.Equal("jem", io.Pools);
    }

    [Fact]
    public void Micro_filter_takes_one_value_and_leaves_the_patterns_after_it_positional()
    {
        var options = Parsed<MicroOptions>("micro", "--filter", "*Fixed* *Pool*", "*Indexer*");
        Assert.Equal("*Fixed* *Pool*", options.Filter);
        Assert.Equal(["*Indexer*"], options.Patterns);
    }

    [Fact]
    public void Micro_list_shows_only_the_classes_the_patterns_match_with_or_without_filter()
    {
        Jembench.Result byFilter = Jembench.Run("micro", "--list", "--filter", "*IndexerBenchmarks*");
        Jembench.Result byPattern = Jembench.Run("micro", "--list", "*.IndexerBenchmarks.*");
        Jembench.Result all = Jembench.Run("micro", "--list");

        Assert.Equal(0, byFilter.ExitCode);
        Assert.Equal("jemalloc.Benchmarks.Micro.IndexerBenchmarks", byFilter.Output.Trim());
        Assert.Equal(byFilter.Output, byPattern.Output);
        Assert.Contains("jemalloc.Benchmarks.Micro.AllocationBenchmarks", all.Output, StringComparison.Ordinal);
        Assert.Contains("jemalloc.Benchmarks.Micro.IndexerBenchmarks", all.Output, StringComparison.Ordinal);
    }
}
