namespace jemalloc;

/// <summary>
/// jemalloc configuration strings for common workloads, to read, adapt and pass at start-up (to
/// <c>Jem.Init</c>, <c>jembench --conf</c>, or the <c>JE_MALLOC_CONF</c> environment variable of a
/// new process). jemalloc reads its configuration once, when the library loads: these cannot change
/// a running process; <see cref="JemTuning"/> changes what can be changed at run time.
/// </summary>
/// <remarks>
/// A conf string is <c>key:value</c> pairs separated by commas; where a key appears twice jemalloc uses
/// the later value, and <see cref="Combine"/> keeps only that one, so <c>Combine(Throughput, "dirty_decay_ms:5")</c> adapts a preset. An unknown key or bad
/// value is not fatal: jemalloc prints <c>Invalid conf pair</c> and ignores it.
/// </remarks>
public static class TuningPresets
{
    /// <summary>
    /// Speed first, memory second: unused pages are kept 30 s for reuse (instead of 10 s), purging
    /// runs on background threads instead of in allocating threads, and the thread caches hold more
    /// and bigger objects.
    /// </summary>
    public const string Throughput = "background_thread:true,dirty_decay_ms:30000,muzzy_decay_ms:30000,tcache_max:32768,tcache_nslots_small_min:200,tcache_nslots_small_max:1000";

    /// <summary>
    /// Memory first: one automatic arena (less fragmentation across arenas), unused pages given
    /// back to the OS at once, small thread caches, and no retained virtual memory.
    /// </summary>
    public const string LowMemory = "narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0,tcache_max:4096,tcache_nslots_small_max:50,retain:false";

    /// <summary>
    /// jemalloc itself asks for transparent huge pages for every mapping it makes
    /// (<c>thp:always</c>) and for its metadata (<c>metadata_thp:auto</c>), and purges slowly so huge
    /// pages are not broken up. Needs a kernel in THP mode <c>madvise</c> or <c>always</c>
    /// (see <see cref="HugePageInfo.Mode"/>). Best for processes dominated by big arrays; per-structure
    /// huge pages (<see cref="AllocationOptions.HugePages"/>) need no conf at all.
    /// </summary>
    public const string HugePages = "thp:always,metadata_thp:auto,dirty_decay_ms:30000,muzzy_decay_ms:0";

    /// <summary>
    /// Many small objects alive at once (thousands of 64 B to 4 KiB allocations): thread caches with
    /// room for 1000-2000 objects per size class, so that freeing and reallocating such a working set
    /// stays in the thread cache instead of going to the arena each time (<c>jembench alloc</c> compares
    /// it with the defaults).
    /// </summary>
    public const string SmallObjects = "tcache_nslots_small_min:1000,tcache_nslots_small_max:2000";

    /// <summary>
    /// Merges conf strings (or single pairs) into one: each key once, where it first appears, with the last
    /// value given for it (<c>Combine(Throughput, "dirty_decay_ms:5")</c> holds <c>dirty_decay_ms:5</c> in
    /// the place of <c>dirty_decay_ms:30000</c>). Empty parts and empty pairs are skipped.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="parts"/> is null.</exception>
    public static string Combine(params string?[] parts)
    {
        ArgumentNullException.ThrowIfNull(parts);
        // Merged rather than joined: a key left twice would read as two settings in a report or a log,
        // although jemalloc uses only the later one.
        var pairs = new List<string>();
        var positions = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (string? part in parts)
        {
            if (string.IsNullOrWhiteSpace(part))
            {
                continue;
            }

            foreach (string pair in part.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
            {
                int colon = pair.IndexOf(':', StringComparison.Ordinal);
                string key = colon < 0 ? pair : pair[..colon];
                if (positions.TryGetValue(key, out int position))
                {
                    pairs[position] = pair;
                }
                else
                {
                    positions.Add(key, pairs.Count);
                    pairs.Add(pair);
                }
            }
        }

        return string.Join(',', pairs);
    }

    /// <summary>The conf pair for jemalloc's own transparent huge page use (<c>thp</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="mode"/> is not a defined value.</exception>
    public static string Thp(JemThpMode mode) => mode switch
    {
        JemThpMode.Default => "thp:default",
        JemThpMode.Always => "thp:always",
        JemThpMode.Never => "thp:never",
        _ => throw new ArgumentOutOfRangeException(nameof(mode), mode, "Not a JemThpMode value."),
    };

    /// <summary>The conf pair for huge pages in jemalloc's metadata (<c>metadata_thp</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="mode"/> is not a defined value.</exception>
    public static string MetadataThp(JemMetadataThpMode mode) => mode switch
    {
        JemMetadataThpMode.Disabled => "metadata_thp:disabled",
        JemMetadataThpMode.Auto => "metadata_thp:auto",
        JemMetadataThpMode.Always => "metadata_thp:always",
        _ => throw new ArgumentOutOfRangeException(nameof(mode), mode, "Not a JemMetadataThpMode value."),
    };
}
