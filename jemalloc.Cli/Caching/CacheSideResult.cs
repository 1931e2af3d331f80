namespace jemalloc.Cli.Caching;

/// <summary>What one side of <c>jembench cache</c> measured.</summary>
/// <param name="Side">The side.</param>
/// <param name="Runs">Every timed run, in the order run.</param>
/// <param name="Server">The server shape's capacity, or null when no server workload ran.</param>
/// <param name="FillSeconds">Time to write the server shape's keys once, in order, before its workloads.</param>
/// <param name="ForcedFullGcMs">The wall time of one forced full blocking collection after the server workloads (at steady state), or -1 if none ran.</param>
/// <param name="EntriesHeld">Entries held at that point.</param>
/// <param name="EntryBytesHeld">Their key and value bytes.</param>
/// <param name="ManagedCacheBytes">The managed heap after that collection less before the cache was made.</param>
/// <param name="NativeCacheBytes">The native cache's allocated bytes at that point (0 on the managed sides).</param>
/// <param name="NativeDeadBytes">Of those, the bytes of its segments that no entry uses (replaced, removed or expired entries' bytes not yet reclaimed; 0 on the managed sides).</param>
/// <param name="PeakRssBytes">The process's peak resident set (VmHWM), or -1.</param>
/// <param name="PeakManagedBytes">The largest managed heap sampled.</param>
/// <param name="PeakNativeBytes">The native cache's largest allocated bytes sampled (its own count).</param>
/// <param name="PeakArenaBytes">The largest of jemalloc's allocated bytes in the cache's arenas sampled.</param>
/// <param name="Samples">Memory samples taken while the server shape ran.</param>
/// <param name="SamplesOverBudget">Samples in which the native cache's allocated bytes or its arenas' passed its budget.</param>
public sealed record CacheSideResult(
    CacheSide Side,
    CacheRunResult[] Runs,
    CacheCapacity? Server,
    double FillSeconds,
    double ForcedFullGcMs,
    long EntriesHeld,
    long EntryBytesHeld,
    long ManagedCacheBytes,
    long NativeCacheBytes,
    long NativeDeadBytes,
    long PeakRssBytes,
    long PeakManagedBytes,
    long PeakNativeBytes,
    long PeakArenaBytes,
    int Samples,
    int SamplesOverBudget)
{
    /// <summary>The cache's bytes at steady state: managed and native.</summary>
    public long CacheBytes => ManagedCacheBytes + NativeCacheBytes;

    /// <summary>Bytes per entry above its key and value at steady state, or -1 when empty.</summary>
    public double OverheadBytesPerEntry => EntriesHeld > 0 ? (double)(CacheBytes - EntryBytesHeld) / EntriesHeld : -1;

    /// <summary>Of <see cref="OverheadBytesPerEntry"/>, the native cache's dead bytes per entry, or -1 when empty.</summary>
    public double DeadBytesPerEntry => EntriesHeld > 0 ? (double)NativeDeadBytes / EntriesHeld : -1;
}
