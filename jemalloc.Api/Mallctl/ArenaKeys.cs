namespace jemalloc;

/// <summary>The mallctl keys of one arena (<c>arena.&lt;i&gt;.*</c> and <c>stats.arenas.&lt;i&gt;.*</c>).</summary>
/// <param name="Index">The arena index, or <see cref="MallctlKeys.AllArenas"/>.</param>
public readonly record struct ArenaKeys(uint Index)
{
    /// <summary><c>arena.&lt;i&gt;.dirty_decay_ms</c>: how long unused dirty pages are kept before purging (-1: never; 0: at once).</summary>
    public MallctlKey<nint> DirtyDecayMs => new($"arena.{Index}.dirty_decay_ms");

    /// <summary><c>arena.&lt;i&gt;.muzzy_decay_ms</c>: the same for muzzy (lazily purged) pages.</summary>
    public MallctlKey<nint> MuzzyDecayMs => new($"arena.{Index}.muzzy_decay_ms");

    /// <summary><c>arena.&lt;i&gt;.purge</c>: purge all unused dirty pages now.</summary>
    public MallctlCommand Purge => new($"arena.{Index}.purge");

    /// <summary><c>arena.&lt;i&gt;.decay</c>: purge what the decay settings say is due now.</summary>
    public MallctlCommand Decay => new($"arena.{Index}.decay");

    /// <summary><c>arena.&lt;i&gt;.reset</c>: free everything allocated in the arena (only for arenas made with <c>arenas.create</c>).</summary>
    public MallctlCommand Reset => new($"arena.{Index}.reset");

    /// <summary><c>arena.&lt;i&gt;.destroy</c>: free everything and remove the arena (only for arenas made with <c>arenas.create</c>).</summary>
    public MallctlCommand Destroy => new($"arena.{Index}.destroy");

    /// <summary><c>stats.arenas.&lt;i&gt;.nthreads</c>: threads bound to the arena.</summary>
    public MallctlKey<uint> ThreadCount => new($"stats.arenas.{Index}.nthreads");

    /// <summary><c>stats.arenas.&lt;i&gt;.pactive</c>: pages in active use.</summary>
    public MallctlKey<nuint> ActivePages => new($"stats.arenas.{Index}.pactive");

    /// <summary><c>stats.arenas.&lt;i&gt;.pdirty</c>: unused dirty pages.</summary>
    public MallctlKey<nuint> DirtyPages => new($"stats.arenas.{Index}.pdirty");

    /// <summary><c>stats.arenas.&lt;i&gt;.pmuzzy</c>: unused muzzy pages.</summary>
    public MallctlKey<nuint> MuzzyPages => new($"stats.arenas.{Index}.pmuzzy");

    /// <summary><c>stats.arenas.&lt;i&gt;.mapped</c>: bytes mapped by the arena.</summary>
    public MallctlKey<nuint> Mapped => new($"stats.arenas.{Index}.mapped");

    /// <summary><c>stats.arenas.&lt;i&gt;.resident</c>: bytes of the arena resident in memory.</summary>
    public MallctlKey<nuint> Resident => new($"stats.arenas.{Index}.resident");

    /// <summary><c>stats.arenas.&lt;i&gt;.small.allocated</c>: bytes in small allocations.</summary>
    public MallctlKey<nuint> SmallAllocated => new($"stats.arenas.{Index}.small.allocated");

    /// <summary><c>stats.arenas.&lt;i&gt;.large.allocated</c>: bytes in large allocations.</summary>
    public MallctlKey<nuint> LargeAllocated => new($"stats.arenas.{Index}.large.allocated");

    /// <summary><c>arena.&lt;i&gt;.initialized</c>: whether the arena exists (an index may be unused or destroyed).</summary>
    public MallctlKey<bool> Initialized => new($"arena.{Index}.initialized");

    /// <summary><c>stats.arenas.&lt;i&gt;.retained</c>: bytes of virtual memory retained for reuse.</summary>
    public MallctlKey<nuint> Retained => new($"stats.arenas.{Index}.retained");

    /// <summary><c>stats.arenas.&lt;i&gt;.small.nmalloc</c>: small allocations made.</summary>
    public MallctlKey<ulong> SmallAllocationCount => new($"stats.arenas.{Index}.small.nmalloc");

    /// <summary><c>stats.arenas.&lt;i&gt;.small.ndalloc</c>: small allocations freed.</summary>
    public MallctlKey<ulong> SmallDeallocationCount => new($"stats.arenas.{Index}.small.ndalloc");

    /// <summary><c>stats.arenas.&lt;i&gt;.large.nmalloc</c>: large allocations made.</summary>
    public MallctlKey<ulong> LargeAllocationCount => new($"stats.arenas.{Index}.large.nmalloc");

    /// <summary><c>stats.arenas.&lt;i&gt;.large.ndalloc</c>: large allocations freed.</summary>
    public MallctlKey<ulong> LargeDeallocationCount => new($"stats.arenas.{Index}.large.ndalloc");

    /// <summary><c>stats.arenas.&lt;i&gt;.dirty_purged</c>: dirty pages purged so far.</summary>
    public MallctlKey<ulong> DirtyPurged => new($"stats.arenas.{Index}.dirty_purged");

    /// <summary><c>stats.arenas.&lt;i&gt;.muzzy_purged</c>: muzzy pages purged so far.</summary>
    public MallctlKey<ulong> MuzzyPurged => new($"stats.arenas.{Index}.muzzy_purged");
}
