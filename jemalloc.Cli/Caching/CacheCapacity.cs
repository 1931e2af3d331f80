namespace jemalloc.Cli.Caching;

/// <summary>
/// What each side of <c>jembench cache</c> may hold, so that their memory is comparable: the native cache gets a
/// byte budget of <see cref="Entries"/> mean entries at <see cref="OverheadGoalBytes"/> above their key and value
/// each (what a native cache that meets its overhead goal holds <see cref="Entries"/> entries in); the entry-count
/// caches get <see cref="Entries"/>; <c>MemoryCache</c> gets a <c>SizeLimit</c> of <see cref="Entries"/> mean
/// entries' key and value bytes (each entry's size its key and value bytes).
/// </summary>
/// <param name="Entries">The entry-count sides' capacity.</param>
/// <param name="BudgetBytes">The native side's budget (at least <see cref="NativeCache.MinimumBudgetBytes"/>).</param>
/// <param name="SizeLimit">The <c>MemoryCache</c> side's size limit, in key and value bytes.</param>
/// <param name="MeanEntryBytes">The mean key and value bytes of the shape's keys.</param>
public sealed record CacheCapacity(int Entries, long BudgetBytes, long SizeLimit, double MeanEntryBytes)
{
    /// <summary>The overhead per entry the budget allows for: the goal of issue 36 for the native cache.</summary>
    public const int OverheadGoalBytes = 48;

    /// <summary>The capacity of a cache that holds <paramref name="entries"/> of <paramref name="space"/>'s mean entries.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="space"/> is null.</exception>
    public static CacheCapacity For(CacheKeySpace space, int entries)
    {
        ArgumentNullException.ThrowIfNull(space);
        double mean = space.MeanEntryBytes;
        long budget = Math.Max(NativeCache.MinimumBudgetBytes, (long)Math.Ceiling(entries * (mean + OverheadGoalBytes)));
        return new CacheCapacity(entries, budget, (long)Math.Ceiling(entries * mean), mean);
    }
}
