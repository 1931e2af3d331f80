namespace jemalloc.Cli.Caching;

/// <summary>
/// What each side of <c>jembench cache</c> may hold, so that their memory is comparable: the native cache gets a
/// byte budget of <see cref="Entries"/> mean entries at <see cref="OverheadGoalBytes"/> above their key and value
/// each (what a native cache that meets its overhead goal holds <see cref="Entries"/> entries in); the entry-count
/// caches get <see cref="Entries"/>; <c>MemoryCache</c> gets a <c>SizeLimit</c> of <see cref="Entries"/> mean
/// entries' key and value bytes (each entry's size its key and value bytes). Where that budget is below the native
/// cache's minimum the budget is raised to it (<see cref="BudgetRaised"/>), and the native side then has room for
/// more entries than the others hold.
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
        long budget = Math.Max(NativeCache.MinimumBudgetBytes, GoalBudget(entries, mean));
        return new CacheCapacity(entries, budget, (long)Math.Ceiling(entries * mean), mean);
    }

    /// <summary>
    /// The budget <see cref="Entries"/> mean entries take at <see cref="OverheadGoalBytes"/> above their key and value:
    /// <see cref="BudgetBytes"/>, unless that was raised to the native cache's minimum.
    /// </summary>
    public long GoalBudgetBytes => GoalBudget(Entries, MeanEntryBytes);

    /// <summary>Whether <see cref="BudgetBytes"/> was raised from <see cref="GoalBudgetBytes"/> to <see cref="NativeCache.MinimumBudgetBytes"/>.</summary>
    public bool BudgetRaised => BudgetBytes > GoalBudgetBytes;

    /// <summary>How many mean entries <see cref="BudgetBytes"/> has room for at <see cref="OverheadGoalBytes"/> above their key and value.</summary>
    public long RoomAtGoal => (long)(BudgetBytes / (MeanEntryBytes + OverheadGoalBytes));

    /// <summary>
    /// The fewest entries a cache must be sized for so that its budget at the overhead goal is not raised, at this
    /// mean entry (a key space of another size has a slightly different mean).
    /// </summary>
    public long EntriesForMinimumBudget => (long)Math.Ceiling(NativeCache.MinimumBudgetBytes / (MeanEntryBytes + OverheadGoalBytes));

    /// <summary>
    /// Whether the native side may hold more of <paramref name="keys"/> keys than the entry-count sides: the budget
    /// was raised and they hold fewer than all of them. (Raised for a cache of every key, it changes nothing.)
    /// </summary>
    public bool NativeHoldsMore(int keys) => BudgetRaised && Entries < keys;

    private static long GoalBudget(int entries, double mean) => (long)Math.Ceiling(entries * (mean + OverheadGoalBytes));
}
