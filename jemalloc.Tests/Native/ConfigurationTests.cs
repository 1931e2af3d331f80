namespace jemalloc.Tests.Native;

public class ConfigurationTests
{
    [Fact]
    public void Init_after_the_library_loaded_throws_a_clear_InvalidOperationException()
    {
        Jem.Load();
        var exception = Assert.Throws<InvalidOperationException>(() => Jem.Init("narenas:2"));
        Assert.Contains("already loaded", exception.Message, StringComparison.Ordinal);
        Assert.Contains("before the first jemalloc call", exception.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    [InlineData("narenas")]
    [InlineData("narenas:")]
    [InlineData(":2")]
    [InlineData("narenas:2,")]
    [InlineData("narenas:2,,tcache:false")]
    [InlineData("nar enas:2")]
    [InlineData("narenas: 2")]
    [InlineData("narenas:2\n")]
    [InlineData("nar-enas:2")]
    public void Init_rejects_text_that_is_not_key_value_pairs(string conf)
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.Init(conf));
        Assert.Equal("conf", exception.ParamName);
        Assert.Throws<ArgumentException>(() => Jem.CheckConfiguration(conf.Length == 0 ? " " : conf));
    }

    [Theory]
    [InlineData("abort_conf:true")]
    [InlineData("narenas:2,abort:true")]
    public void Init_refuses_options_that_would_end_the_process(string conf)
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.Init(conf));
        Assert.Contains("end the process", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Init_rejects_null()
    {
        Assert.Throws<ArgumentNullException>(() => Jem.Init(null!));
        Assert.Throws<ArgumentNullException>(() => Jem.CheckConfiguration(null!));
    }

    [Fact]
    public void Options_jemalloc_uses_are_reported_applied()
    {
        uint narenas = MallctlKeys.Opt.Narenas.Get();
        nint dirty = MallctlKeys.Opt.DirtyDecayMs.Get();
        string thp = MallctlKeys.Opt.Thp.Get();
        bool tcache = MallctlKeys.Opt.Tcache.Get();
        nuint oversize = MallctlKeys.Opt.OversizeThreshold.Get();
        string conf = $"narenas:{narenas},dirty_decay_ms:{dirty},thp:{thp},tcache:{(tcache ? "true" : "false")},oversize_threshold:0x{oversize:x}";

        JemConfigurationReport report = Jem.CheckConfiguration(conf);
        Assert.Equal(5, report.Options.Count);
        Assert.All(report.Options, option => Assert.Equal(JemOptionStatus.Applied, option.Status));
        Assert.True(report.NoneRejected);
        Assert.Equal(narenas.ToString(System.Globalization.CultureInfo.InvariantCulture), report.Options[0].EffectiveValue);
        Assert.Equal(conf, report.Configuration);
    }

    [Fact]
    public void Options_jemalloc_does_not_use_are_reported_rejected_with_the_reason()
    {
        uint narenas = MallctlKeys.Opt.Narenas.Get();
        JemConfigurationReport report = Jem.CheckConfiguration($"no_such_option:1,narenas:{narenas + 1},dirty_decay_ms:soon,prof:true,lg_tcache_max:16");

        JemOptionCheck unknown = report.Options[0];
        Assert.Equal(JemOptionStatus.Rejected, unknown.Status);
        Assert.Contains("not a jemalloc", unknown.Reason, StringComparison.Ordinal);

        JemOptionCheck different = report.Options[1];
        Assert.Equal(JemOptionStatus.Rejected, different.Status);
        Assert.Equal(narenas.ToString(System.Globalization.CultureInfo.InvariantCulture), different.EffectiveValue);

        Assert.Equal(JemOptionStatus.Rejected, report.Options[2].Status);

        // This build has no profiling: opt.prof does not exist.
        Assert.False(Jem.BuildConfiguration.Prof);
        Assert.Equal(JemOptionStatus.Rejected, report.Options[3].Status);
        Assert.Contains("not built in", report.Options[3].Reason, StringComparison.Ordinal);

        Assert.Equal(JemOptionStatus.NotVerifiable, report.Options[4].Status);
        Assert.Equal(4, report.Rejected.Count());
        Assert.False(report.NoneRejected);
        Assert.Contains("no_such_option:1 -> Rejected", report.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Without_options_the_report_is_empty()
    {
        Assert.Empty(Jem.CheckConfiguration(string.Empty).Options);
        Assert.Equal("No jemalloc options were given.", Jem.CheckConfiguration(string.Empty).ToString());
    }

    [Fact]
    public void Options_given_to_Init_in_a_fresh_process_are_applied_and_bad_ones_reported()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
            new Dictionary<string, string?>(), "conf", "narenas:3,dirty_decay_ms:0,tcache_max:4096,bogus_option:7,muzzy_decay_ms:later");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("LOADED_BEFORE_CALL False", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION narenas|Applied|3", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION dirty_decay_ms|Applied|0", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION tcache_max|Applied|4096", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION bogus_option|Rejected|", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION muzzy_decay_ms|Rejected|", result.Output, StringComparison.Ordinal);
        Assert.Contains("INIT_AFTER_LOAD InvalidOperationException", result.Output, StringComparison.Ordinal);

        // jemalloc itself complains while loading, before any message hook can exist: on standard error.
        Assert.Contains("<jemalloc>: Invalid conf pair: bogus_option:7", result.Error, StringComparison.Ordinal);
        Assert.Contains("<jemalloc>: Invalid conf value: muzzy_decay_ms:later", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void Options_from_the_JE_MALLOC_CONF_environment_variable_are_reported_when_Init_was_not_called()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
            new Dictionary<string, string?> { ["JE_MALLOC_CONF"] = "narenas:5,tcache:false" }, "report");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("REQUESTED narenas:5,tcache:false", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION narenas|Applied|5", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION tcache|Applied|false", result.Output, StringComparison.Ordinal);
    }
}
