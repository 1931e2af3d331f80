using jemalloc.Cli.Caching;
using jemalloc.Cli.Commands;

namespace jemalloc.Cli.Tests.Caching;

/// <summary>
/// The native side's budget when what the entry-count sides hold takes less than the native cache's minimum:
/// raised to the minimum, the heading says so with both figures and warns that the sides are not comparable,
/// and says nothing more where the raise changes nothing (a cache of every key).
/// </summary>
public sealed class CacheBudgetTests
{
    private const string RaisedLine =
        "native a budget of 1.0 MiB (1,048,576 B), the native cache's minimum, raised from 297,961 B = 500 x (547.9 B + 48 B, the overhead goal), " +
        "so it has room for about 1,759 entries at that overhead where the entry-count sides hold 500; memorycache a SizeLimit of 0.3 MiB of keys and values.";

    private const string RaisedWarning =
        "cache: WARNING: server shape: the native budget was raised from 297,961 B to the native cache's minimum of 1,048,576 B, so the native side can hold " +
        "every one of the 1,000 keys while the entry-count sides and memorycache hold about 500: its hit ratios and throughput are not comparable with theirs. " +
        "--entries 3,816 at --cache-percent 50 sizes the caches past the minimum.";

    [Fact]
    public void A_raised_budget_is_said_with_the_figure_it_was_raised_from_and_a_warning()
    {
        IReadOnlyList<string> lines = CacheCommand.ServerShapeLines(Settings(1_000, 50));

        Assert.Equal(2, lines.Count);
        Assert.StartsWith("cache: server shape: 1,000 keys of ", lines[0], StringComparison.Ordinal);
        Assert.EndsWith("mean key and value 547.9 B; the caches are sized for 50% of the keys: " + RaisedLine, lines[0], StringComparison.Ordinal);
        Assert.Equal(RaisedWarning, lines[1]);

        CacheCapacity capacity = CacheCapacity.For(new CacheKeySpace(1_000, 1_000, smallValues: false), 500);
        Assert.True(capacity.BudgetRaised);
        Assert.Equal(NativeCache.MinimumBudgetBytes, capacity.BudgetBytes);
        Assert.Equal(297_961, capacity.GoalBudgetBytes);
        Assert.Equal(1_759, capacity.RoomAtGoal);
        Assert.True(capacity.NativeHoldsMore(1_000));
    }

    [Fact]
    public void A_budget_not_raised_is_what_the_entries_take_at_the_overhead_goal_without_a_warning()
    {
        IReadOnlyList<string> lines = CacheCommand.ServerShapeLines(Settings(5_000, 50));

        string line = Assert.Single(lines);
        Assert.EndsWith(
            "mean key and value 508.4 B; the caches are sized for 50% of the keys: native a budget of 1.3 MiB = 2,500 x (508.4 B + 48 B, the overhead goal), " +
            "so the entry-count sides' 2,500 entries are what the budget holds at that overhead; memorycache a SizeLimit of 1.2 MiB of keys and values.",
            line, StringComparison.Ordinal);
        Assert.DoesNotContain("raised", line, StringComparison.Ordinal);
        CacheCapacity capacity = CacheCapacity.For(new CacheKeySpace(5_000, 5_000, smallValues: false), 2_500);
        Assert.False(capacity.BudgetRaised);
        Assert.Equal(capacity.GoalBudgetBytes, capacity.BudgetBytes);
        Assert.Equal((long)Math.Ceiling(2_500 * (capacity.MeanEntryBytes + 48)), capacity.BudgetBytes);
        Assert.False(capacity.NativeHoldsMore(5_000));
    }

    [Fact]
    public void Where_the_raised_budget_holds_fewer_than_all_keys_the_warning_says_about_how_many()
    {
        IReadOnlyList<string> lines = CacheCommand.ServerShapeLines(Settings(5_000, 10));

        Assert.Equal(2, lines.Count);
        Assert.Contains("raised from 278,207 B = 500 x (508.4 B + 48 B, the overhead goal), so it has room for about 1,884 entries", lines[0], StringComparison.Ordinal);
        Assert.Equal(
            "cache: WARNING: server shape: the native budget was raised from 278,207 B to the native cache's minimum of 1,048,576 B, so the native side can hold " +
            "about 1,884 entries while the entry-count sides and memorycache hold about 500: its hit ratios and throughput are not comparable with theirs. " +
            "--entries 19,200 at --cache-percent 10 sizes the caches past the minimum.",
            lines[1]);
    }

    [Theory]
    [InlineData(1_000, 50, 3_816)]
    [InlineData(3_520, 50, 3_816)] // what the mean of 1,000 keys asks for (1,760 x 2), still raised at its own mean
    [InlineData(5_000, 10, 19_200)]
    [InlineData(1_000, 1, 194_600)]
    public void The_suggested_entries_size_the_caches_past_the_minimum(int entries, int percent, int suggested)
    {
        Assert.True(CacheCommand.ServerShapeLines(Settings(entries, percent)).Count == 2, "The run was expected to be raised.");
        Assert.Equal(suggested, CacheCommand.EntriesPastMinimumBudget(Settings(entries, percent)));

        CacheSettings past = Settings(suggested, percent);
        Assert.False(CacheCapacity.For(new CacheKeySpace(suggested, suggested, smallValues: false), past.ServerCapacityEntries).BudgetRaised);
        Assert.Single(CacheCommand.ServerShapeLines(past));
    }

    [Fact]
    public void The_small_shapes_hold_alike_on_every_side_so_they_need_no_warning()
    {
        // zipf-read's cache holds all 500 keys: its budget is raised, which changes nothing.
        (CacheKeySpace zipfKeys, CacheCapacity zipf) = CacheHarness.SmallShape(CacheWorkload.ZipfRead);
        Assert.Equal(500, zipf.Entries);
        Assert.True(zipf.BudgetRaised);
        Assert.False(zipf.NativeHoldsMore(zipfKeys.Count));
        Assert.Null(CacheCommand.RaisedBudgetWarning("zipf-read", zipfKeys.Count, zipf, null));

        // read-write's cache holds a tenth of 200,000 keys, at a budget above the minimum.
        (CacheKeySpace readWriteKeys, CacheCapacity readWrite) = CacheHarness.SmallShape(CacheWorkload.ReadWrite);
        Assert.Equal(20_000, readWrite.Entries);
        Assert.False(readWrite.BudgetRaised, $"{readWrite.GoalBudgetBytes:N0} B");
        Assert.Null(CacheCommand.RaisedBudgetWarning("read-write", readWriteKeys.Count, readWrite, null));

        Assert.Throws<ArgumentOutOfRangeException>(() => CacheHarness.SmallShape(CacheWorkload.YcsbA));
    }

    [Fact]
    public void A_small_cache_of_fewer_than_all_keys_would_be_warned_about_without_a_hint()
    {
        var keys = new CacheKeySpace(500, 500, smallValues: true);
        CacheCapacity capacity = CacheCapacity.For(keys, 50);

        string warning = CacheCommand.RaisedBudgetWarning("zipf-read", keys.Count, capacity, null)!;

        Assert.StartsWith($"cache: WARNING: zipf-read: the native budget was raised from {capacity.GoalBudgetBytes:N0} B to the native cache's minimum of 1,048,576 B, " +
            "so the native side can hold every one of the 500 keys while the entry-count sides and memorycache hold about 50: ", warning, StringComparison.Ordinal);
        Assert.EndsWith("its hit ratios and throughput are not comparable with theirs.", warning, StringComparison.Ordinal);
    }

    private static CacheSettings Settings(int entries, int percent) =>
        new(entries, percent, 1_000, [1], [CacheWorkload.YcsbC], 1);
}
