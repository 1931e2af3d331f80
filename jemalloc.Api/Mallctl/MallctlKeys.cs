namespace jemalloc;

/// <summary>
/// The well-known mallctl keys, typed. Names follow jemalloc's own tree (<c>opt.*</c>,
/// <c>config.*</c>, <c>arenas.*</c>, <c>stats.*</c>, <c>thread.*</c>, <c>arena.&lt;i&gt;.*</c>).
/// </summary>
public static class MallctlKeys
{
    /// <summary><c>version</c>: the jemalloc version string.</summary>
    public static MallctlKey<string> Version => new("version");

    /// <summary><c>epoch</c>: write to refresh the cached statistics; reads the current epoch.</summary>
    public static MallctlKey<ulong> Epoch => new("epoch");

    /// <summary><c>background_thread</c>: whether background threads purge unused memory.</summary>
    public static MallctlKey<bool> BackgroundThread => new("background_thread");

    /// <summary><c>max_background_threads</c>: the most background threads jemalloc may run.</summary>
    public static MallctlKey<nuint> MaxBackgroundThreads => new("max_background_threads");

    /// <summary>The build's configuration (<c>config.*</c>), fixed when jemalloc was compiled.</summary>
    public static class Config
    {
        /// <summary><c>config.debug</c>: a checked build (<c>--enable-debug</c>).</summary>
        public static MallctlKey<bool> Debug => new("config.debug");

        /// <summary><c>config.stats</c>: statistics are collected.</summary>
        public static MallctlKey<bool> Stats => new("config.stats");

        /// <summary><c>config.prof</c>: heap profiling is built in.</summary>
        public static MallctlKey<bool> Prof => new("config.prof");

        /// <summary><c>config.fill</c>: junk/zero filling is built in.</summary>
        public static MallctlKey<bool> Fill => new("config.fill");

        /// <summary><c>config.lazy_lock</c>: lazy locking is built in.</summary>
        public static MallctlKey<bool> LazyLock => new("config.lazy_lock");

        /// <summary><c>config.malloc_conf</c>: the configuration string compiled into the library.</summary>
        public static MallctlKey<string> MallocConf => new("config.malloc_conf");

        /// <summary><c>config.utrace</c>: allocation tracing is built in.</summary>
        public static MallctlKey<bool> Utrace => new("config.utrace");

        /// <summary><c>config.xmalloc</c>: abort-on-failure support is built in.</summary>
        public static MallctlKey<bool> Xmalloc => new("config.xmalloc");
    }

    /// <summary>The options jemalloc started with (<c>opt.*</c>); read-only after start-up.</summary>
    public static class Opt
    {
        /// <summary><c>opt.abort</c>.</summary>
        public static MallctlKey<bool> Abort => new("opt.abort");

        /// <summary><c>opt.abort_conf</c>.</summary>
        public static MallctlKey<bool> AbortConf => new("opt.abort_conf");

        /// <summary><c>opt.narenas</c>: the number of automatic arenas.</summary>
        public static MallctlKey<uint> Narenas => new("opt.narenas");

        /// <summary><c>opt.dirty_decay_ms</c>.</summary>
        public static MallctlKey<nint> DirtyDecayMs => new("opt.dirty_decay_ms");

        /// <summary><c>opt.muzzy_decay_ms</c>.</summary>
        public static MallctlKey<nint> MuzzyDecayMs => new("opt.muzzy_decay_ms");

        /// <summary><c>opt.tcache</c>: whether thread caches are on.</summary>
        public static MallctlKey<bool> Tcache => new("opt.tcache");

        /// <summary><c>opt.tcache_max</c>: the largest size class cached per thread.</summary>
        public static MallctlKey<nuint> TcacheMax => new("opt.tcache_max");

        /// <summary><c>opt.thp</c>: the transparent huge page mode (<c>default</c>, <c>always</c>, <c>never</c>).</summary>
        public static MallctlKey<string> Thp => new("opt.thp");

        /// <summary><c>opt.metadata_thp</c>: huge pages for jemalloc's metadata (<c>disabled</c>, <c>auto</c>, <c>always</c>).</summary>
        public static MallctlKey<string> MetadataThp => new("opt.metadata_thp");

        /// <summary><c>opt.background_thread</c>.</summary>
        public static MallctlKey<bool> BackgroundThread => new("opt.background_thread");

        /// <summary><c>opt.junk</c>: junk filling (<c>true</c>, <c>false</c>, <c>alloc</c>, <c>free</c>).</summary>
        public static MallctlKey<string> Junk => new("opt.junk");

        /// <summary><c>opt.zero</c>: zero filling of every allocation.</summary>
        public static MallctlKey<bool> Zero => new("opt.zero");

        /// <summary><c>opt.retain</c>: keep unused virtual memory mapped instead of unmapping it.</summary>
        public static MallctlKey<bool> Retain => new("opt.retain");

        /// <summary><c>opt.percpu_arena</c>.</summary>
        public static MallctlKey<string> PercpuArena => new("opt.percpu_arena");

        /// <summary><c>opt.oversize_threshold</c>: allocations at least this big go to a dedicated arena.</summary>
        public static MallctlKey<nuint> OversizeThreshold => new("opt.oversize_threshold");

        /// <summary><c>opt.stats_print</c>: print statistics at exit.</summary>
        public static MallctlKey<bool> StatsPrint => new("opt.stats_print");

        /// <summary><c>opt.tcache_nslots_small_min</c>: the fewest objects a thread cache holds per small size class.</summary>
        public static MallctlKey<uint> TcacheNslotsSmallMin => new("opt.tcache_nslots_small_min");

        /// <summary><c>opt.tcache_nslots_small_max</c>: the most objects a thread cache holds per small size class.</summary>
        public static MallctlKey<uint> TcacheNslotsSmallMax => new("opt.tcache_nslots_small_max");

        /// <summary><c>opt.tcache_nslots_large</c>: the objects a thread cache holds per large size class.</summary>
        public static MallctlKey<uint> TcacheNslotsLarge => new("opt.tcache_nslots_large");

        /// <summary><c>opt.max_background_threads</c>: the most background threads, as configured.</summary>
        public static MallctlKey<nuint> MaxBackgroundThreads => new("opt.max_background_threads");
    }

    /// <summary>Facts shared by all arenas (<c>arenas.*</c>).</summary>
    public static class Arenas
    {
        /// <summary><c>arenas.narenas</c>: the current number of arenas.</summary>
        public static MallctlKey<uint> Narenas => new("arenas.narenas");

        /// <summary><c>arenas.page</c>: the page size.</summary>
        public static MallctlKey<nuint> Page => new("arenas.page");

        /// <summary><c>arenas.quantum</c>: the allocation quantum.</summary>
        public static MallctlKey<nuint> Quantum => new("arenas.quantum");

        /// <summary><c>arenas.tcache_max</c>: the largest size class cached per thread.</summary>
        public static MallctlKey<nuint> TcacheMax => new("arenas.tcache_max");

        /// <summary><c>arenas.create</c>: reading it creates a new arena and returns its index.</summary>
        public static MallctlKey<uint> Create => new("arenas.create");

        /// <summary><c>arenas.dirty_decay_ms</c>: the default for arenas created from now on.</summary>
        public static MallctlKey<nint> DirtyDecayMs => new("arenas.dirty_decay_ms");

        /// <summary><c>arenas.muzzy_decay_ms</c>: the default for arenas created from now on.</summary>
        public static MallctlKey<nint> MuzzyDecayMs => new("arenas.muzzy_decay_ms");
    }

    /// <summary>Global statistics (<c>stats.*</c>); refreshed only when <see cref="Epoch"/> is written.</summary>
    public static class Stats
    {
        /// <summary><c>stats.allocated</c>: bytes allocated by the application.</summary>
        public static MallctlKey<nuint> Allocated => new("stats.allocated");

        /// <summary><c>stats.active</c>: bytes in active pages.</summary>
        public static MallctlKey<nuint> Active => new("stats.active");

        /// <summary><c>stats.metadata</c>: bytes of jemalloc's own metadata.</summary>
        public static MallctlKey<nuint> Metadata => new("stats.metadata");

        /// <summary><c>stats.resident</c>: bytes in physically resident pages.</summary>
        public static MallctlKey<nuint> Resident => new("stats.resident");

        /// <summary><c>stats.mapped</c>: bytes in mapped extents.</summary>
        public static MallctlKey<nuint> Mapped => new("stats.mapped");

        /// <summary><c>stats.retained</c>: bytes retained (virtual memory kept for reuse).</summary>
        public static MallctlKey<nuint> Retained => new("stats.retained");
    }

    /// <summary>The calling thread's settings and counters (<c>thread.*</c>).</summary>
    public static class Thread
    {
        /// <summary><c>thread.arena</c>: the arena the thread allocates in by default.</summary>
        public static MallctlKey<uint> Arena => new("thread.arena");

        /// <summary><c>thread.allocated</c>: bytes this thread has ever allocated.</summary>
        public static MallctlKey<ulong> Allocated => new("thread.allocated");

        /// <summary><c>thread.deallocated</c>: bytes this thread has ever freed.</summary>
        public static MallctlKey<ulong> Deallocated => new("thread.deallocated");

        /// <summary><c>thread.tcache.enabled</c>: whether the thread cache is on for this thread.</summary>
        public static MallctlKey<bool> TcacheEnabled => new("thread.tcache.enabled");

        /// <summary><c>thread.tcache.flush</c>: returns the thread cache's objects to their arenas.</summary>
        public static MallctlCommand TcacheFlush => new("thread.tcache.flush");
    }

    /// <summary>
    /// Explicit thread caches (<c>tcache.*</c>). Only ids created through <see cref="Create"/> (by this
    /// library) can be flushed, destroyed or named in <see cref="MallocxFlags.ThreadCache"/>.
    /// </summary>
    public static class Tcache
    {
        /// <summary><c>tcache.create</c>: reading it creates an explicit thread cache and returns its id.</summary>
        public static MallctlKey<uint> Create => new("tcache.create");

        /// <summary><c>tcache.flush</c>: write an id from <see cref="Create"/> to return that cache's objects to their arenas.</summary>
        public static MallctlKey<uint> Flush => new("tcache.flush");

        /// <summary><c>tcache.destroy</c>: write an id from <see cref="Create"/> to flush and destroy that cache.</summary>
        public static MallctlKey<uint> Destroy => new("tcache.destroy");
    }

    /// <summary>Keys of one arena (<c>arena.&lt;i&gt;.*</c>); use <see cref="AllArenas"/> for all of them at once.</summary>
    /// <param name="index">The arena index.</param>
    public static ArenaKeys Arena(uint index) => new(index);

    /// <summary>The <c>&lt;i&gt;</c> that addresses all arenas at once (<c>MALLCTL_ARENAS_ALL</c>).</summary>
    public const uint AllArenas = 4096;
}
