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
    [InlineData("abort:TRUE")]
    [InlineData("abort_conf:1")]
    [InlineData("abort:false,abort_conf:yes")]
    public void Init_refuses_options_that_would_end_the_process(string conf)
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.Init(conf));
        Assert.Contains("end the process", exception.Message, StringComparison.Ordinal);
        Assert.Contains(":false' (its default) is accepted", exception.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => Jem.ValidateConfiguration(conf));
    }

    [Theory]
    [InlineData("abort:false")]
    [InlineData("abort_conf:false")]
    [InlineData("narenas:2,abort:false,abort_conf:false")]
    public void Abort_options_set_to_false_their_default_are_accepted(string conf) => Jem.ValidateConfiguration(conf);

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
        // Where jemalloc has no transparent huge pages (the Windows build) thp is not an option it
        // uses; the next test checks how that is reported.
        string thp = MallctlKeys.Opt.Thp.Get();
        string thpOption = thp == "not supported" ? string.Empty : $"thp:{thp},";
        bool tcache = MallctlKeys.Opt.Tcache.Get();
        nuint oversize = MallctlKeys.Opt.OversizeThreshold.Get();
        string conf = $"narenas:{narenas},dirty_decay_ms:{dirty},{thpOption}tcache:{(tcache ? "true" : "false")},oversize_threshold:0x{oversize:x}";

        JemConfigurationReport report = Jem.CheckConfiguration(conf);
        Assert.Equal(thpOption.Length == 0 ? 4 : 5, report.Options.Count);
        Assert.All(report.Options, option => Assert.Equal(JemOptionStatus.Applied, option.Status));
        Assert.True(report.NoneRejected);
        Assert.Equal(narenas.ToString(System.Globalization.CultureInfo.InvariantCulture), report.Options[0].EffectiveValue);
        Assert.Equal(conf, report.Configuration);
    }

    [Fact]
    public void Thp_is_applied_where_jemalloc_has_transparent_huge_pages_and_reported_as_having_no_effect_where_not()
    {
        JemOptionCheck check = Jem.CheckConfiguration("thp:default").Options[0];
        if (MallctlKeys.Opt.Thp.Get() == "not supported")
        {
            // The MinGW build for Windows: jemalloc ignores thp, and the report says why instead of "invalid value".
            Assert.Equal(JemOptionStatus.Rejected, check.Status);
            Assert.Equal("not supported", check.EffectiveValue);
            Assert.Contains("no transparent huge pages", check.Reason, StringComparison.Ordinal);
        }
        else
        {
            Assert.Equal(JemOptionStatus.Applied, check.Status);
            Assert.Equal("default", check.EffectiveValue);
        }
    }

    [Fact]
    public void Options_jemalloc_does_not_use_are_reported_rejected_with_the_reason()
    {
        uint narenas = MallctlKeys.Opt.Narenas.Get();
        JemConfigurationReport report = Jem.CheckConfiguration($"no_such_option:1,narenas:{narenas + 1},dirty_decay_ms:soon,prof:true,lg_tcache_max:16");

        JemOptionCheck unknown = report.Options[0];
        Assert.Equal(JemOptionStatus.Rejected, unknown.Status);
        Assert.Contains("not a jemalloc", unknown.Reason, StringComparison.Ordinal);

        // A valid value this process was not started with: jemalloc refused nothing.
        JemOptionCheck different = report.Options[1];
        Assert.Equal(JemOptionStatus.DiffersFromProcess, different.Status);
        Assert.Equal(narenas.ToString(System.Globalization.CultureInfo.InvariantCulture), different.EffectiveValue);
        Assert.Contains("not started with this value", different.Reason, StringComparison.Ordinal);

        Assert.Equal(JemOptionStatus.Rejected, report.Options[2].Status);
        Assert.Contains("'soon' is not a value dirty_decay_ms takes", report.Options[2].Reason, StringComparison.Ordinal);

        // This build has no profiling: opt.prof does not exist.
        Assert.False(Jem.BuildConfiguration.Prof);
        Assert.Equal(JemOptionStatus.Rejected, report.Options[3].Status);
        Assert.Contains("not built in", report.Options[3].Reason, StringComparison.Ordinal);

        Assert.Equal(JemOptionStatus.NotVerifiable, report.Options[4].Status);
        Assert.Equal(3, report.Rejected.Count());
        Assert.False(report.NoneRejected);
        Assert.Contains("no_such_option:1 -> Rejected", report.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Valid_values_this_process_does_not_use_differ_from_it_and_are_not_rejected()
    {
        nuint tcacheMax = MallctlKeys.Opt.TcacheMax.Get();
        bool tcache = MallctlKeys.Opt.Tcache.Get();
        JemConfigurationReport report = Jem.CheckConfiguration($"tcache_max:{tcacheMax / 2},tcache:{(tcache ? "false" : "true")},dss:primary,retain:maybe,narenas:-3");

        Assert.Equal(JemOptionStatus.DiffersFromProcess, report.Options[0].Status);
        Assert.Equal(tcacheMax.ToString(System.Globalization.CultureInfo.InvariantCulture), report.Options[0].EffectiveValue);
        Assert.Contains("-> DiffersFromProcess (effective ", report.Options[0].ToString(), StringComparison.Ordinal);
        Assert.Equal(JemOptionStatus.DiffersFromProcess, report.Options[1].Status);
        Assert.Equal(Jem.GetMallctlString("opt.dss") == "primary" ? JemOptionStatus.Applied : JemOptionStatus.DiffersFromProcess, report.Options[2].Status);

        // What jemalloc can never read is still rejected, in any string: a bool other than true/false, a signed number for an unsigned.
        Assert.Equal(JemOptionStatus.Rejected, report.Options[3].Status);
        Assert.Contains("true or false", report.Options[3].Reason, StringComparison.Ordinal);
        Assert.Equal(JemOptionStatus.Rejected, report.Options[4].Status);
        Assert.Equal(2, report.Rejected.Count());
    }

    [Fact]
    public void A_key_given_twice_is_overridden_by_its_later_value_not_rejected()
    {
        nint dirty = MallctlKeys.Opt.DirtyDecayMs.Get();
        JemConfigurationReport report = Jem.CheckConfiguration($"dirty_decay_ms:{dirty + 1},no_such_option:1,dirty_decay_ms:{dirty},no_such_option:2");

        JemOptionCheck earlier = report.Options[0];
        Assert.Equal(JemOptionStatus.Overridden, earlier.Status);
        Assert.Equal((dirty + 1).ToString(System.Globalization.CultureInfo.InvariantCulture), earlier.RequestedValue);
        Assert.Equal(dirty.ToString(System.Globalization.CultureInfo.InvariantCulture), earlier.EffectiveValue);
        Assert.Contains($"given again later (dirty_decay_ms:{dirty})", earlier.Reason, StringComparison.Ordinal);
        Assert.Equal(JemOptionStatus.Applied, report.Options[2].Status);

        // An unknown key stays rejected each time it is given.
        Assert.Equal(JemOptionStatus.Rejected, report.Options[1].Status);
        Assert.Equal(JemOptionStatus.Rejected, report.Options[3].Status);
        Assert.Equal(2, report.Rejected.Count());
    }

    [Fact]
    public void A_combined_preset_reports_the_later_value_applied_and_the_earlier_overridden_in_a_fresh_process()
    {
        // Combine merges (one dirty_decay_ms), and a string given with the key twice reports the earlier one
        // as overridden; a value jemalloc refuses at start (beyond its limit) is still rejected.
        string combined = TuningPresets.Combine(TuningPresets.Throughput, "dirty_decay_ms:5");
        Assert.Single(combined.Split(','), pair => pair.StartsWith("dirty_decay_ms:", StringComparison.Ordinal));
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
            new Dictionary<string, string?>(), "conf", "dirty_decay_ms:30000,narenas:3,dirty_decay_ms:5,muzzy_decay_ms:99999999999999999");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("OPTION dirty_decay_ms|Overridden|5", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION dirty_decay_ms|Applied|5", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION narenas|Applied|3", result.Output, StringComparison.Ordinal);
        Assert.Contains("OPTION muzzy_decay_ms|Rejected|", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("|DiffersFromProcess|", result.Output, StringComparison.Ordinal);
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
