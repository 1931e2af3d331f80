namespace jemalloc.Tests.Tuning;

public sealed unsafe class TuningPresetsTests
{
    private static readonly string[] ThpValues = ["default", "always", "never", "not supported"];
    private static readonly string[] MetadataThpValues = ["disabled", "auto", "always"];

    public static TheoryData<string> Presets => new()
    {
        TuningPresets.Throughput,
        TuningPresets.LowMemory,
        TuningPresets.HugePages,
        TuningPresets.SmallObjects,
    };

    [Theory]
    [MemberData(nameof(Presets))]
    public void Every_preset_key_is_an_option_of_this_jemalloc(string preset)
    {
        foreach (string pair in preset.Split(','))
        {
            string[] parts = pair.Split(':');
            Assert.Equal(2, parts.Length);
            Assert.False(string.IsNullOrWhiteSpace(parts[1]));
            // Every conf key is readable as opt.<key>: ENOENT would mean jemalloc ignores it.
            Assert.Equal(0, Jem.Mallctl("opt." + parts[0], null, null, null, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Presets))]
    public void Every_preset_option_is_applied_by_jemalloc_in_a_fresh_process(string preset)
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(new Dictionary<string, string?>(), "conf", preset);

        Assert.True(result.ExitCode == 0, result.ToString());
        foreach (string pair in preset.Split(','))
        {
            string key = pair.Split(':')[0];
            // Applied, or NotVerifiable where the report cannot read the option's type back; never Rejected.
            Assert.True(result.Output.Contains($"OPTION {key}|", StringComparison.Ordinal), $"{key} is missing:{Environment.NewLine}{result}");
            if (key == "thp" && result.Output.Contains("OPTION thp|Rejected|not supported", StringComparison.Ordinal))
            {
                // A jemalloc without transparent huge pages (the Windows build) ignores thp, says so
                // itself, and the report names that value: the preset reached it, it has no effect there.
                Assert.Contains("No THP support", result.Error, StringComparison.Ordinal);
                continue;
            }

            Assert.False(result.Output.Contains($"OPTION {key}|Rejected|", StringComparison.Ordinal), $"{key} was rejected:{Environment.NewLine}{result}");
        }

        // jemalloc itself names any pair it ignores, while loading.
        Assert.DoesNotContain("Invalid conf", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void Small_objects_preset_has_the_measured_thread_cache_sizes() =>
        Assert.Equal("tcache_nslots_small_min:1000,tcache_nslots_small_max:2000", TuningPresets.SmallObjects);

    [Fact]
    public void Combine_joins_parts_skipping_empty_ones_and_later_keys_come_last()
    {
        string conf = TuningPresets.Combine(TuningPresets.SmallObjects, "", null, " narenas:2, ", TuningPresets.Thp(JemThpMode.Always));
        Assert.Equal("tcache_nslots_small_min:1000,tcache_nslots_small_max:2000,narenas:2,thp:always", conf);
        Assert.Equal(string.Empty, TuningPresets.Combine());
        Assert.Throws<ArgumentNullException>(() => TuningPresets.Combine(null!));
    }

    [Fact]
    public void Combine_merges_a_later_value_into_the_place_of_the_first()
    {
        string conf = TuningPresets.Combine(TuningPresets.Throughput, "dirty_decay_ms:5", "narenas:4, background_thread:false");
        Assert.Equal(
            "background_thread:false,dirty_decay_ms:5,muzzy_decay_ms:30000,tcache_max:32768,tcache_nslots_small_min:200,tcache_nslots_small_max:1000,narenas:4",
            conf);
        Assert.Equal("narenas:3,tcache:false", TuningPresets.Combine("narenas:2,,narenas:3", "tcache:false"));

        // What it gives is checked like any other string: nothing given twice, so nothing overridden.
        Assert.DoesNotContain(Jem.CheckConfiguration(conf).Options, option => option.Status == JemOptionStatus.Overridden);
    }

    [Theory]
    [InlineData(JemThpMode.Default, "thp:default")]
    [InlineData(JemThpMode.Always, "thp:always")]
    [InlineData(JemThpMode.Never, "thp:never")]
    public void Thp_pairs_name_the_mode(JemThpMode mode, string expected) => Assert.Equal(expected, TuningPresets.Thp(mode));

    [Theory]
    [InlineData(JemMetadataThpMode.Disabled, "metadata_thp:disabled")]
    [InlineData(JemMetadataThpMode.Auto, "metadata_thp:auto")]
    [InlineData(JemMetadataThpMode.Always, "metadata_thp:always")]
    public void Metadata_thp_pairs_name_the_mode(JemMetadataThpMode mode, string expected) => Assert.Equal(expected, TuningPresets.MetadataThp(mode));

    [Fact]
    public void Undefined_modes_are_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => TuningPresets.Thp((JemThpMode)42));
        Assert.Throws<ArgumentOutOfRangeException>(() => TuningPresets.MetadataThp((JemMetadataThpMode)42));
    }

    [Fact]
    public void The_running_thp_options_read_back_as_the_conf_values()
    {
        Assert.Contains(MallctlKeys.Opt.Thp.Get(), ThpValues);
        Assert.Contains(MallctlKeys.Opt.MetadataThp.Get(), MetadataThpValues);
        Assert.True(MallctlKeys.Opt.TcacheNslotsSmallMax.Get() >= MallctlKeys.Opt.TcacheNslotsSmallMin.Get());
        Assert.True(MallctlKeys.Opt.TcacheNslotsLarge.Get() > 0);
        Assert.True(MallctlKeys.Opt.MaxBackgroundThreads.Get() > 0);
    }
}
