namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>The thread-cache tuning the <c>alloc</c> suite compares with jemalloc's defaults.</summary>
public static class AllocTuning
{
    /// <summary>
    /// More small-object slots per thread cache: with many small allocations alive at once, the
    /// default cache overflows and every allocation goes to the arena.
    /// </summary>
    public const string TunedThreadCache = "tcache_nslots_small_max:2000,tcache_nslots_small_min:1000";
}
