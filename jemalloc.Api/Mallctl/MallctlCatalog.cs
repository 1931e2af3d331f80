using System.Buffers;
using System.Collections.Frozen;

namespace jemalloc.Mallctl;

/// <summary>
/// Every key of jemalloc 5.3's mallctl tree with the C type of its value, numeric components
/// written as <c>{i}</c>. Generated from the node tables and handler macros of jemalloc 5.3.0's
/// <c>src/ctl.c</c>; the per-mutex statistics (<c>stats.mutexes.*</c>, <c>stats.arenas.{i}.mutexes.*</c>,
/// <c>stats.arenas.{i}.bins.{i}.mutex.*</c>) are plain read-only counters and are left to jemalloc's own size check.
/// </summary>
internal static class MallctlCatalog
{
    private static readonly FrozenDictionary<string, MallctlCType> Types = new Dictionary<string, MallctlCType>(StringComparer.Ordinal)
    {
        ["version"] = MallctlCType.String,
        ["epoch"] = MallctlCType.UInt64,
        ["background_thread"] = MallctlCType.Bool,
        ["max_background_threads"] = MallctlCType.SizeT,
        ["thread.arena"] = MallctlCType.Unsigned,
        ["thread.allocated"] = MallctlCType.UInt64,
        ["thread.allocatedp"] = MallctlCType.Pointer,
        ["thread.deallocated"] = MallctlCType.UInt64,
        ["thread.deallocatedp"] = MallctlCType.Pointer,
        ["thread.tcache.enabled"] = MallctlCType.Bool,
        ["thread.tcache.flush"] = MallctlCType.Command,
        ["thread.peak.read"] = MallctlCType.UInt64,
        ["thread.peak.reset"] = MallctlCType.Command,
        ["thread.prof.name"] = MallctlCType.String,
        ["thread.prof.active"] = MallctlCType.Bool,
        ["thread.idle"] = MallctlCType.Command,
        ["config.cache_oblivious"] = MallctlCType.Bool,
        ["config.debug"] = MallctlCType.Bool,
        ["config.fill"] = MallctlCType.Bool,
        ["config.lazy_lock"] = MallctlCType.Bool,
        ["config.malloc_conf"] = MallctlCType.String,
        ["config.opt_safety_checks"] = MallctlCType.Bool,
        ["config.prof"] = MallctlCType.Bool,
        ["config.prof_libgcc"] = MallctlCType.Bool,
        ["config.prof_libunwind"] = MallctlCType.Bool,
        ["config.stats"] = MallctlCType.Bool,
        ["config.utrace"] = MallctlCType.Bool,
        ["config.xmalloc"] = MallctlCType.Bool,
        ["opt.abort"] = MallctlCType.Bool,
        ["opt.abort_conf"] = MallctlCType.Bool,
        ["opt.cache_oblivious"] = MallctlCType.Bool,
        ["opt.trust_madvise"] = MallctlCType.Bool,
        ["opt.confirm_conf"] = MallctlCType.Bool,
        ["opt.hpa"] = MallctlCType.Bool,
        ["opt.hpa_slab_max_alloc"] = MallctlCType.SizeT,
        ["opt.hpa_hugification_threshold"] = MallctlCType.SizeT,
        ["opt.hpa_hugify_delay_ms"] = MallctlCType.UInt64,
        ["opt.hpa_min_purge_interval_ms"] = MallctlCType.UInt64,
        ["opt.hpa_dirty_mult"] = MallctlCType.UInt32,
        ["opt.hpa_sec_nshards"] = MallctlCType.SizeT,
        ["opt.hpa_sec_max_alloc"] = MallctlCType.SizeT,
        ["opt.hpa_sec_max_bytes"] = MallctlCType.SizeT,
        ["opt.hpa_sec_bytes_after_flush"] = MallctlCType.SizeT,
        ["opt.hpa_sec_batch_fill_extra"] = MallctlCType.SizeT,
        ["opt.metadata_thp"] = MallctlCType.String,
        ["opt.retain"] = MallctlCType.Bool,
        ["opt.dss"] = MallctlCType.String,
        ["opt.narenas"] = MallctlCType.Unsigned,
        ["opt.percpu_arena"] = MallctlCType.String,
        ["opt.oversize_threshold"] = MallctlCType.SizeT,
        ["opt.mutex_max_spin"] = MallctlCType.Int64,
        ["opt.background_thread"] = MallctlCType.Bool,
        ["opt.max_background_threads"] = MallctlCType.SizeT,
        ["opt.dirty_decay_ms"] = MallctlCType.SSizeT,
        ["opt.muzzy_decay_ms"] = MallctlCType.SSizeT,
        ["opt.stats_print"] = MallctlCType.Bool,
        ["opt.stats_print_opts"] = MallctlCType.String,
        ["opt.stats_interval"] = MallctlCType.Int64,
        ["opt.stats_interval_opts"] = MallctlCType.String,
        ["opt.junk"] = MallctlCType.String,
        ["opt.zero"] = MallctlCType.Bool,
        ["opt.utrace"] = MallctlCType.Bool,
        ["opt.xmalloc"] = MallctlCType.Bool,
        ["opt.experimental_infallible_new"] = MallctlCType.Bool,
        ["opt.tcache"] = MallctlCType.Bool,
        ["opt.tcache_max"] = MallctlCType.SizeT,
        ["opt.tcache_nslots_small_min"] = MallctlCType.Unsigned,
        ["opt.tcache_nslots_small_max"] = MallctlCType.Unsigned,
        ["opt.tcache_nslots_large"] = MallctlCType.Unsigned,
        ["opt.lg_tcache_nslots_mul"] = MallctlCType.SSizeT,
        ["opt.tcache_gc_incr_bytes"] = MallctlCType.SizeT,
        ["opt.tcache_gc_delay_bytes"] = MallctlCType.SizeT,
        ["opt.lg_tcache_flush_small_div"] = MallctlCType.Unsigned,
        ["opt.lg_tcache_flush_large_div"] = MallctlCType.Unsigned,
        ["opt.thp"] = MallctlCType.String,
        ["opt.lg_extent_max_active_fit"] = MallctlCType.SizeT,
        ["opt.prof"] = MallctlCType.Bool,
        ["opt.prof_prefix"] = MallctlCType.String,
        ["opt.prof_active"] = MallctlCType.Bool,
        ["opt.prof_thread_active_init"] = MallctlCType.Bool,
        ["opt.lg_prof_sample"] = MallctlCType.SizeT,
        ["opt.lg_prof_interval"] = MallctlCType.SSizeT,
        ["opt.prof_gdump"] = MallctlCType.Bool,
        ["opt.prof_final"] = MallctlCType.Bool,
        ["opt.prof_leak"] = MallctlCType.Bool,
        ["opt.prof_leak_error"] = MallctlCType.Bool,
        ["opt.prof_accum"] = MallctlCType.Bool,
        ["opt.prof_recent_alloc_max"] = MallctlCType.SSizeT,
        ["opt.prof_stats"] = MallctlCType.Bool,
        ["opt.prof_sys_thread_name"] = MallctlCType.Bool,
        ["opt.prof_time_resolution"] = MallctlCType.String,
        ["opt.lg_san_uaf_align"] = MallctlCType.SSizeT,
        ["opt.zero_realloc"] = MallctlCType.String,
        ["tcache.create"] = MallctlCType.Unsigned,
        ["tcache.flush"] = MallctlCType.Unsigned,
        ["tcache.destroy"] = MallctlCType.Unsigned,
        ["arena.{i}.initialized"] = MallctlCType.Bool,
        ["arena.{i}.decay"] = MallctlCType.Command,
        ["arena.{i}.purge"] = MallctlCType.Command,
        ["arena.{i}.reset"] = MallctlCType.Command,
        ["arena.{i}.destroy"] = MallctlCType.Command,
        ["arena.{i}.dss"] = MallctlCType.String,
        ["arena.{i}.oversize_threshold"] = MallctlCType.SizeT,
        ["arena.{i}.dirty_decay_ms"] = MallctlCType.SSizeT,
        ["arena.{i}.muzzy_decay_ms"] = MallctlCType.SSizeT,
        ["arena.{i}.extent_hooks"] = MallctlCType.Pointer,
        ["arena.{i}.retain_grow_limit"] = MallctlCType.SizeT,
        ["arenas.narenas"] = MallctlCType.Unsigned,
        ["arenas.dirty_decay_ms"] = MallctlCType.SSizeT,
        ["arenas.muzzy_decay_ms"] = MallctlCType.SSizeT,
        ["arenas.quantum"] = MallctlCType.SizeT,
        ["arenas.page"] = MallctlCType.SizeT,
        ["arenas.tcache_max"] = MallctlCType.SizeT,
        ["arenas.nbins"] = MallctlCType.Unsigned,
        ["arenas.nhbins"] = MallctlCType.Unsigned,
        ["arenas.bin.{i}.size"] = MallctlCType.SizeT,
        ["arenas.bin.{i}.nregs"] = MallctlCType.UInt32,
        ["arenas.bin.{i}.slab_size"] = MallctlCType.SizeT,
        ["arenas.bin.{i}.nshards"] = MallctlCType.UInt32,
        ["arenas.nlextents"] = MallctlCType.Unsigned,
        ["arenas.lextent.{i}.size"] = MallctlCType.SizeT,
        ["arenas.create"] = MallctlCType.Unsigned,
        ["arenas.lookup"] = MallctlCType.Pointer,
        ["prof.thread_active_init"] = MallctlCType.Bool,
        ["prof.active"] = MallctlCType.Bool,
        ["prof.dump"] = MallctlCType.String,
        ["prof.gdump"] = MallctlCType.Bool,
        ["prof.prefix"] = MallctlCType.String,
        ["prof.reset"] = MallctlCType.SizeT,
        ["prof.interval"] = MallctlCType.UInt64,
        ["prof.lg_sample"] = MallctlCType.SizeT,
        ["prof.log_start"] = MallctlCType.String,
        ["prof.log_stop"] = MallctlCType.Command,
        ["prof.stats.bins.{i}.live"] = MallctlCType.Struct,
        ["prof.stats.bins.{i}.accum"] = MallctlCType.Struct,
        ["prof.stats.lextents.{i}.live"] = MallctlCType.Struct,
        ["prof.stats.lextents.{i}.accum"] = MallctlCType.Struct,
        ["stats.allocated"] = MallctlCType.SizeT,
        ["stats.active"] = MallctlCType.SizeT,
        ["stats.metadata"] = MallctlCType.SizeT,
        ["stats.metadata_thp"] = MallctlCType.SizeT,
        ["stats.resident"] = MallctlCType.SizeT,
        ["stats.mapped"] = MallctlCType.SizeT,
        ["stats.retained"] = MallctlCType.SizeT,
        ["stats.background_thread.num_threads"] = MallctlCType.SizeT,
        ["stats.background_thread.num_runs"] = MallctlCType.UInt64,
        ["stats.background_thread.run_interval"] = MallctlCType.UInt64,
        ["stats.mutexes.reset"] = MallctlCType.Command,
        ["stats.arenas.{i}.nthreads"] = MallctlCType.Unsigned,
        ["stats.arenas.{i}.uptime"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.dss"] = MallctlCType.String,
        ["stats.arenas.{i}.dirty_decay_ms"] = MallctlCType.SSizeT,
        ["stats.arenas.{i}.muzzy_decay_ms"] = MallctlCType.SSizeT,
        ["stats.arenas.{i}.pactive"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.pdirty"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.pmuzzy"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.mapped"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.retained"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extent_avail"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.dirty_npurge"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.dirty_nmadvise"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.dirty_purged"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.muzzy_npurge"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.muzzy_nmadvise"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.muzzy_purged"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.base"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.internal"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.metadata_thp"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.tcache_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.tcache_stashed_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.resident"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.abandoned_vm"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_sec_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.small.allocated"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.small.nmalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.small.ndalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.small.nrequests"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.small.nfills"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.small.nflushes"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.large.allocated"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.large.nmalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.large.ndalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.large.nrequests"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.large.nfills"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.large.nflushes"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.nmalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.ndalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.nrequests"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.curregs"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.bins.{i}.nfills"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.nflushes"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.nslabs"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.nreslabs"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.bins.{i}.curslabs"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.bins.{i}.nonfull_slabs"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.lextents.{i}.nmalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.lextents.{i}.ndalloc"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.lextents.{i}.nrequests"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.lextents.{i}.curlextents"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.ndirty"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.nmuzzy"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.nretained"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.dirty_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.muzzy_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.extents.{i}.retained_bytes"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.npageslabs_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.npageslabs_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.nactive_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.nactive_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.ndirty_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.full_slabs.ndirty_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.npageslabs_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.npageslabs_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.nactive_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.nactive_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.ndirty_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.empty_slabs.ndirty_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.npageslabs_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.npageslabs_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.nactive_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.nactive_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.ndirty_nonhuge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.nonfull_slabs.{i}.ndirty_huge"] = MallctlCType.SizeT,
        ["stats.arenas.{i}.hpa_shard.npurge_passes"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.hpa_shard.npurges"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.hpa_shard.nhugifies"] = MallctlCType.UInt64,
        ["stats.arenas.{i}.hpa_shard.ndehugifies"] = MallctlCType.UInt64,
        ["stats.zero_reallocs"] = MallctlCType.SizeT,
        ["experimental.hooks.install"] = MallctlCType.Pointer,
        ["experimental.hooks.remove"] = MallctlCType.Pointer,
        ["experimental.hooks.prof_backtrace"] = MallctlCType.Pointer,
        ["experimental.hooks.prof_dump"] = MallctlCType.Pointer,
        ["experimental.hooks.safety_check_abort"] = MallctlCType.Pointer,
        ["experimental.utilization.query"] = MallctlCType.Pointer,
        ["experimental.utilization.batch_query"] = MallctlCType.Pointer,
        ["experimental.arenas.{i}.pactivep"] = MallctlCType.Pointer,
        ["experimental.arenas_create_ext"] = MallctlCType.Pointer,
        ["experimental.prof_recent.alloc_max"] = MallctlCType.SSizeT,
        ["experimental.prof_recent.alloc_dump"] = MallctlCType.Pointer,
        ["experimental.batch_alloc"] = MallctlCType.Pointer,
        ["experimental.thread.activity_callback"] = MallctlCType.Pointer,
    }.ToFrozenDictionary(StringComparer.Ordinal);

    /// <summary>The C type of <paramref name="pattern"/> (a name with <c>{i}</c> for numbers), or <see cref="MallctlCType.Unknown"/>.</summary>
    internal static MallctlCType TypeOf(string pattern) => Types.GetValueOrDefault(pattern, MallctlCType.Unknown);

    /// <summary>All catalogued patterns (for tests).</summary>
    internal static IEnumerable<KeyValuePair<string, MallctlCType>> All => Types;

    // What strtoumax accepts at the start of a number: white space, a sign, a digit.
    private static readonly SearchValues<char> NumberStarts = SearchValues.Create("0123456789+- \t\n\v\f\r");

    /// <summary>
    /// <paramref name="name"/> with every all-digit component replaced by <c>{i}</c>, and the value of
    /// the first such component (<see cref="uint.MaxValue"/> when there is none or it does not fit).
    /// </summary>
    /// <exception cref="MallctlException">
    /// The name holds a NUL, or a component jemalloc would read as a number although it is not one
    /// (<c>8x</c>, <c>+8</c>, <c> 8</c>): the policy must judge the key jemalloc will address.
    /// </exception>
    internal static string Normalize(string name, out uint firstIndex)
    {
        firstIndex = uint.MaxValue;
        if (name.Contains('\0', StringComparison.Ordinal))
        {
            // jemalloc reads the name as a C string and stops at the NUL: "arena.8.reset\0" would be
            // judged as an unknown key here and run as arena 8's reset there.
            MallctlPolicy.ThrowRefused(name.Replace("\0", "\\0", StringComparison.Ordinal), "The name contains a NUL character; jemalloc would read only the part before it.");
        }

        if (!name.AsSpan().ContainsAny(NumberStarts))
        {
            return name;
        }

        string[] parts = name.Split('.');
        bool first = true;
        for (int i = 0; i < parts.Length; i++)
        {
            string part = parts[i];
            if (part.Length == 0 || !part.All(char.IsAsciiDigit))
            {
                if (part.Length > 0 && (char.IsAsciiDigit(part[0]) || part[0] is '+' or '-' || char.IsWhiteSpace(part[0])))
                {
                    // jemalloc parses an index component with strtoumax and ignores what follows the
                    // digits, so "arena.8x.reset" and "arena.+8.reset" address arena 8. Names of keys never
                    // start with a digit, a sign or a space: such a component can only be a disguised index.
                    MallctlPolicy.ThrowRefused(name, $"Component '{part}' is not a plain decimal number; write an index as digits only (e.g. arena.8.purge).");
                }

                continue;
            }

            if (first)
            {
                firstIndex = uint.TryParse(part, out uint value) ? value : uint.MaxValue;
                first = false;
            }

            parts[i] = "{i}";
        }

        return string.Join('.', parts);
    }
}
