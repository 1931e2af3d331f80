using System.Globalization;
using jemalloc.Mallctl;

namespace jemalloc.Configuration;

/// <summary>
/// jemalloc 5.3's <c>malloc_conf</c> keys and the C types of their <c>opt.*</c> read-back, so an
/// effective value can be read with the right size and compared with the text asked for.
/// </summary>
internal static class JemOptionCatalog
{
    /// <summary>What <c>opt.thp</c> reads where jemalloc was built without transparent huge page support.</summary>
    internal const string ThpNotSupported = "not supported";

    /// <summary>The C type behind an <c>opt.*</c> key.</summary>
    internal enum Kind
    {
        Bool,
        Unsigned,
        Size,
        Signed,
        Text,
        FixedPoint,
        NoReadBack,
    }

    private static readonly Dictionary<string, Kind> Options = Build();

    private static Dictionary<string, Kind> Build()
    {
        var options = new Dictionary<string, Kind>(StringComparer.Ordinal);
        void Add(Kind kind, params string[] keys)
        {
            foreach (string key in keys)
            {
                options.Add(key, kind);
            }
        }

        Add(Kind.Bool, "abort", "abort_conf", "cache_oblivious", "trust_madvise", "confirm_conf", "hpa", "retain",
            "background_thread", "stats_print", "zero", "utrace", "xmalloc", "tcache", "prof", "prof_active", "prof_accum",
            "prof_gdump", "prof_final", "prof_leak", "prof_leak_error", "prof_stats", "prof_thread_active_init",
            "prof_sys_thread_name");
        Add(Kind.Unsigned, "narenas", "tcache_nslots_large");
        Add(Kind.FixedPoint, "hpa_dirty_mult");
        Add(Kind.Size, "hpa_hugify_delay_ms", "hpa_min_purge_interval_ms", "hpa_slab_max_alloc", "hpa_sec_nshards",
            "hpa_sec_max_alloc", "hpa_sec_max_bytes", "oversize_threshold", "max_background_threads", "tcache_max",
            "tcache_gc_incr_bytes", "tcache_gc_delay_bytes", "lg_prof_sample", "lg_extent_max_active_fit");
        Add(Kind.Signed, "mutex_max_spin", "dirty_decay_ms", "muzzy_decay_ms", "stats_interval", "lg_tcache_nslots_mul",
            "lg_prof_interval", "prof_recent_alloc_max", "lg_san_uaf_align");
        Add(Kind.Text, "dss", "metadata_thp", "percpu_arena", "stats_print_opts", "stats_interval_opts", "junk", "thp",
            "prof_prefix", "prof_time_resolution", "zero_realloc");
        Add(Kind.NoReadBack, "bin_shards", "experimental_infallible_new", "hpa_hugification_threshold",
            "hpa_hugification_threshold_ratio", "hpa_sec_batch_fill_extra", "hpa_sec_bytes_after_flush",
            "lg_tcache_flush_large_div", "lg_tcache_flush_small_div", "lg_tcache_max", "log", "narenas_ratio", "prof_log",
            "prof_unbias", "san_guard_large", "san_guard_small", "slab_sizes", "tcache_nslots_small_max",
            "tcache_nslots_small_min");
        return options;
    }

    /// <summary>Whether <paramref name="key"/> is a jemalloc 5.3 option.</summary>
    internal static bool IsOption(string key) => Options.ContainsKey(key);

    /// <summary>Compares one option with jemalloc's effective value.</summary>
    /// <param name="key">The option's key.</param>
    /// <param name="requested">The value asked for.</param>
    /// <param name="givenAtStart">
    /// Whether jemalloc was started with this very pair (the last value for <paramref name="key"/> in its
    /// configuration): only then does a different effective value mean jemalloc refused it.
    /// </param>
    internal static JemOptionCheck Check(string key, string requested, bool givenAtStart)
    {
        if (!Options.TryGetValue(key, out Kind kind))
        {
            return new(key, requested, null, JemOptionStatus.Rejected, "not a jemalloc 5.3 option");
        }

        if (kind == Kind.NoReadBack)
        {
            return new(key, requested, null, JemOptionStatus.NotVerifiable, $"jemalloc has no opt.{key} to read back");
        }

        string name = "opt." + key;
        string effective;
        bool same;
        bool parsed;
        try
        {
            switch (kind)
            {
                case Kind.Bool:
                    bool flag = MallctlClient.Read<bool>(name);
                    effective = flag ? "true" : "false";
                    // jemalloc takes exactly "true" or "false".
                    parsed = requested is "true" or "false";
                    same = effective == requested;
                    break;
                case Kind.Unsigned:
                    uint small = MallctlClient.Read<uint>(name);
                    effective = small.ToString(CultureInfo.InvariantCulture);
                    parsed = TryParseUnsigned(requested, out ulong wantedSmall);
                    same = parsed && wantedSmall == small;
                    break;
                case Kind.Size:
                    ulong size = MallctlClient.Read<ulong>(name);
                    effective = size.ToString(CultureInfo.InvariantCulture);
                    parsed = TryParseUnsigned(requested, out ulong wantedSize);
                    same = parsed && wantedSize == size;
                    break;
                case Kind.Signed:
                    long signed = MallctlClient.Read<long>(name);
                    effective = signed.ToString(CultureInfo.InvariantCulture);
                    parsed = TryParseSigned(requested, out long wantedSigned);
                    same = parsed && wantedSigned == signed;
                    break;
                case Kind.FixedPoint:
                    // fxp_t: 16.16 fixed point in a uint32; -1 (all bits) means "disabled".
                    uint fixedPoint = MallctlClient.Read<uint>(name);
                    effective = fixedPoint == uint.MaxValue ? "-1" : (fixedPoint / 65536.0).ToString(CultureInfo.InvariantCulture);
                    parsed = requested == "-1" || double.TryParse(requested, NumberStyles.Float, CultureInfo.InvariantCulture, out _);
                    same = requested == "-1" ? fixedPoint == uint.MaxValue :
                        double.TryParse(requested, NumberStyles.Float, CultureInfo.InvariantCulture, out double wantedFixed) &&
                        fixedPoint != uint.MaxValue && Math.Abs(wantedFixed - (fixedPoint / 65536.0)) < 1.0 / 65536;
                    break;
                default:
                    effective = MallctlClient.ReadString(name) ?? string.Empty;
                    // Which names a text option takes is jemalloc's to say: only a run with the value tells.
                    parsed = true;
                    same = effective == requested;
                    break;
            }
        }
        catch (MallctlException exception) when (exception.Error == MallctlError.NotFound)
        {
            return new(key, requested, null, JemOptionStatus.Rejected, $"this jemalloc build has no opt.{key} (its feature is not built in)");
        }

        // A jemalloc built for an OS without transparent huge pages (Windows, for one) reads back this
        // fixed value whatever was asked, and ignores the option: that is the reason, not a bad value.
        if (key == "thp" && effective == ThpNotSupported)
        {
            return new(key, requested, effective, JemOptionStatus.Rejected,
                "this platform has no transparent huge pages for jemalloc (opt.thp is \"not supported\"), so the option has no effect");
        }

        if (same)
        {
            return new(key, requested, effective, JemOptionStatus.Applied, string.Empty);
        }

        if (!parsed)
        {
            return new(key, requested, effective, JemOptionStatus.Rejected, $"'{requested}' is not a value {key} takes ({Describe(kind)}), so jemalloc ignores it");
        }

        return givenAtStart
            ? new(key, requested, effective, JemOptionStatus.Rejected, "jemalloc did not accept the value (out of range)")
            : new(key, requested, effective, JemOptionStatus.DiffersFromProcess,
                "this process was not started with this value, so it uses another; whether jemalloc accepts it shows only in a process started with it");
    }

    private static string Describe(Kind kind) => kind switch
    {
        Kind.Bool => "true or false",
        Kind.Unsigned or Kind.Size => "an unsigned number",
        Kind.Signed => "a number",
        _ => "a decimal number or -1",
    };

    // jemalloc parses numbers with strtoumax/strtoimax and base 0: decimal, 0x hexadecimal, 0 octal.
    private static bool TryParseUnsigned(string text, out ulong value)
    {
        value = 0;
        try
        {
            if (text.StartsWith("0x", StringComparison.OrdinalIgnoreCase))
            {
                value = Convert.ToUInt64(text[2..], 16);
                return true;
            }

            if (text.Length > 1 && text[0] == '0')
            {
                value = Convert.ToUInt64(text, 8);
                return true;
            }
        }
        catch (Exception exception) when (exception is FormatException or OverflowException or ArgumentException)
        {
            return false;
        }

        return ulong.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value);
    }

    private static bool TryParseSigned(string text, out long value)
    {
        if (text.StartsWith('-'))
        {
            bool parsed = TryParseUnsigned(text[1..], out ulong magnitude) && magnitude <= (ulong)long.MaxValue;
            value = parsed ? -(long)magnitude : 0;
            return parsed;
        }

        bool ok = TryParseUnsigned(text, out ulong positive) && positive <= long.MaxValue;
        value = ok ? (long)positive : 0;
        return ok;
    }
}
