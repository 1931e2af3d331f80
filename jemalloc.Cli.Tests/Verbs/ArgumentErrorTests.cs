using jemalloc.Cli.Commands;

namespace jemalloc.Cli.Tests.Verbs;

[Collection(JembenchRuns.Name)]
public class ArgumentErrorTests
{
    private static void AssertRefused(string expectedMessagePart, params string[] args)
    {
        Jembench.Result result = Jembench.Run(args);
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains(expectedMessagePart, result.Error, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("   at ", result.All, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("malloc", "--fill")]
    [InlineData("array", "--fill")]
    [InlineData("safe", "--create")]
    [InlineData("buffer", "--math")]
    [InlineData("hugearray", "--fill")]
    [InlineData("huge", "--math")]
    public void A_verb_without_an_element_type_is_refused(string verb, string operation) =>
        AssertRefused("choose an element type", verb, operation);

    [Theory]
    [InlineData("malloc", "-b", "-i")]
    [InlineData("array", "-l", "-d")]
    [InlineData("buffer", "-f", "-d")]
    [InlineData("hugearray", "-i", "--udt")]
    public void Two_element_types_are_refused(string verb, string first, string second) =>
        AssertRefused("exactly one element type", verb, "--fill", first, second);

    [Theory]
    [InlineData("-f")]
    [InlineData("-d")]
    [InlineData("--udt")]
    public void Unsigned_with_a_non_integer_type_is_refused(string type) =>
        AssertRefused("-u (unsigned) only goes with an integer type", "array", "--fill", "-u", type);

    // A list option takes one comma-separated value, so a value after it is positional; verbs without
    // positional values refuse it instead of taking it as another list entry or ignoring it. The trailing
    // invalid option value shows the stray is refused first: before the fix these reached that check.
    [Fact]
    public void Records_side_takes_one_value_and_a_second_is_refused() =>
        AssertRefused("'native' is not an option", "records", "--side", "class", "native", "--records", "1");

    [Fact]
    public void Columnar_side_takes_one_value_and_a_second_is_refused() =>
        AssertRefused("'decode' is not an option", "columnar", "--side", "managed", "decode", "--columns", "0");

    [Fact]
    public void Io_writers_take_one_value_and_a_second_is_refused() =>
        AssertRefused("'array' is not an option", "io", "--json", "--writers", "native", "array", "--rounds", "0");

    [Fact]
    public void Io_pools_take_one_value_and_a_second_is_refused() =>
        AssertRefused("'shared' is not an option", "io", "--pipe", "--pools", "jem", "shared", "--rounds", "0");

    [Theory]
    [InlineData("io", "--pipe", "--rounds", "0")]
    [InlineData("info", "--conf", "narenas:1")]
    public void A_verb_without_positional_values_refuses_one(params string[] args) =>
        AssertRefused("'stray' is not an option", [args[0], "stray", .. args[1..]]);

    [Fact]
    public void Unsigned_alone_is_not_a_type() => AssertRefused("choose an element type", "array", "--fill", "-u");

    [Theory]
    [InlineData("malloc")]
    [InlineData("buffer")]
    public void Udt_is_refused_where_the_verb_needs_primitive_elements(string verb) =>
        AssertRefused("does not take --udt", verb, "--fill", "--udt");

    [Fact]
    public void Math_on_a_udt_is_refused() => AssertRefused("--math needs a numeric element type", "array", "--math", "--udt");

    [Theory]
    [InlineData("malloc", "--create, --fill or --fragment")]
    [InlineData("array", "--create, --fill or --math")]
    [InlineData("buffer", "--create, --fill or --math")]
    [InlineData("hugearray", "--create, --fill or --math")]
    public void A_verb_without_an_operation_is_refused(string verb, string choices) =>
        AssertRefused(choices, verb, "-i");

    [Theory]
    [InlineData("malloc", "--fill", "0")]
    [InlineData("malloc", "--fill", "-5")]
    [InlineData("array", "--fill", "2147483648")]
    [InlineData("buffer", "--create", "0")]
    [InlineData("hugearray", "--fill", "-1")]
    [InlineData("hugearray", "--fill", "9223372036854775807")]
    public void Sizes_out_of_range_are_refused(string verb, string operation, string size) =>
        AssertRefused("out of range", verb, operation, "-i", size);

    [Fact]
    public void Fragmentation_rounds_out_of_range_are_refused() =>
        AssertRefused("rounds", "malloc", "--fragment", "-b", "5000000");

    [Fact]
    public void Fragmentation_mixed_with_element_count_operations_is_refused() =>
        AssertRefused("run --fragment on its own", "malloc", "--fragment", "--fill", "-b");

    [Fact]
    public void A_size_that_is_not_a_number_is_refused()
    {
        Jembench.Result result = Jembench.Run("array", "--fill", "-i", "lots");
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("ERROR(S)", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void An_unknown_option_is_refused_with_its_name()
    {
        Jembench.Result result = Jembench.Run("array", "--fill", "-i", "--frobnicate");
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("frobnicate", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", result.All, StringComparison.Ordinal);
    }

    [Fact]
    public void An_unknown_verb_is_refused()
    {
        Jembench.Result result = Jembench.Run("frobnicate");
        Assert.Equal(Program.ExitBadArguments, result.ExitCode);
        Assert.Contains("frobnicate", result.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("1001")]
    public void Target_count_out_of_range_is_refused(string count) =>
        AssertRefused("--target-count must be between 1 and 1000", "array", "--fill", "-i", "-t", count);

    [Fact]
    public void Once_with_a_target_count_is_refused() =>
        AssertRefused("contradict", "array", "--fill", "-i", "--once", "-t", "3");

    [Fact]
    public void An_unknown_exporter_is_refused() =>
        AssertRefused("unknown format 'pdf'", "array", "--fill", "-i", "-e", "pdf");

    [Theory]
    [InlineData("narenas")]
    [InlineData("narenas:2,")]
    [InlineData("narenas:2;rm -rf")]
    public void A_malformed_conf_is_refused(string conf) =>
        AssertRefused("is not a jemalloc configuration", "array", "--fill", "-i", "--conf", conf);

    [Fact]
    public void A_conf_setting_abort_conf_is_refused() =>
        AssertRefused("abort_conf", "array", "--fill", "-i", "--conf", "narenas:2,abort_conf:true");

    [Fact]
    public void Info_with_a_malformed_conf_is_refused() =>
        AssertRefused("is not a jemalloc configuration", "info", "--conf", "oops");

    [Fact]
    public void Vector_without_a_precision_is_refused() => AssertRefused("-f (float) or -d (double)", "vector", "16");

    [Fact]
    public void Vector_with_both_precisions_is_refused() => AssertRefused("both were given", "vector", "-f", "-d", "16");

    [Fact]
    public void Vector_width_out_of_range_is_refused() => AssertRefused("out of range", "vector", "-f", "100001");

    [Fact]
    public void Alloc_count_out_of_range_is_refused() => AssertRefused("out of range", "alloc", "0");

    [Theory]
    [InlineData("0")]
    [InlineData("1,65")]
    [InlineData("-2")]
    public void Alloc_thread_counts_out_of_range_are_refused(string threads) =>
        AssertRefused("thread count", "alloc", "--in-process", "--threads", threads, "64");

    [Theory]
    [InlineData("")]
    [InlineData("1,two")]
    [InlineData("1;2")]
    public void Alloc_thread_counts_that_are_not_a_list_are_refused(string threads) =>
        AssertRefused("is not a comma-separated list of thread counts", "alloc", "--in-process", "--threads", threads, "64");

    [Fact]
    public void Micro_with_a_filter_that_matches_nothing_is_refused() =>
        AssertRefused("micro", "micro", "--filter", "NoSuchBenchmarkAnywhere", "--quick");

    [Fact]
    public void Micro_with_a_jit_mode_it_does_not_know_is_refused_naming_it() =>
        AssertRefused("--jit must be 'tiered' or 'full', not 'fast'", "micro", "--jit", "fast", "*AllocationBenchmarks*", "--quick");

    [Fact]
    public void Micro_in_a_process_that_is_not_jembench_refuses_a_jit_mode_it_cannot_start()
    {
        // The test host runs tiered compilation (the runtime's default), and cannot start a jembench process in the other mode.
        Assert.True(MicroJit.ThisProcessRunsTiered() == true, "the test host was expected to run tiered compilation");
        AssertRefused("a jembench process in the other mode cannot be started from it", "micro", "--jit", "full", "*AllocationBenchmarks.MallocFree*", "--quick");
    }

    [Fact]
    public void A_size_beyond_any_machine_is_refused_up_front_with_what_it_needs()
    {
        Jembench.Result result = Jembench.Run("hugearray", "--fill", "-l", "1152921504606846975");
        Assert.Equal(Program.ExitNotEnoughMemory, result.ExitCode);
        Assert.Contains("needs about 9223372036.9 GB", result.Error, StringComparison.Ordinal);
        Assert.Contains("available", result.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("--help")]
    [InlineData("help")]
    public void No_arguments_or_help_print_the_version_and_the_verbs(string commandLine)
    {
        Jembench.Result result = Jembench.Run(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        Assert.Contains("jembench 0.", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("ERROR", result.Output, StringComparison.Ordinal);
        foreach (string verb in new[] { "malloc", "array, safe", "buffer", "hugearray, huge", "vector", "alloc", "info", "micro", "hugepages", "arena" })
        {
            Assert.Contains(verb, result.Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Version_prints_the_version()
    {
        Jembench.Result result = Jembench.Run("--version");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        Assert.StartsWith("jembench 0.", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Verb_help_lists_the_verb_options()
    {
        Jembench.Result result = Jembench.Run("hugearray", "--help");
        Assert.Equal(Program.ExitSuccess, result.ExitCode);
        Assert.Contains("--math", result.Output, StringComparison.Ordinal);
        Assert.Contains("--cold-start", result.Output, StringComparison.Ordinal);
    }
}
