using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// NativeCache attacked through its public API alone, in the test process: leases across eviction,
/// replace, remove, Clear and Dispose; bad keys and absurd sizes; options at their limits; GetOrAdd
/// factories that misbehave. Each test leaves nothing allocated (the leak-checked collection).
/// </summary>
[Collection(LeakChecked.Name)]
public sealed partial class NativeCacheAttackTests : LeakCheckedTest
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_lease_keeps_its_bytes_across_replace_remove_eviction_and_Clear(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 1, 300));
        Assert.True(cache.TryGet(CacheTestData.Key(1), out NativeCacheLease lease));
        byte[] before = lease.Span.ToArray();

        cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 2, 300));
        Assert.Equal(before, lease.Span.ToArray());
        Assert.True(cache.Remove(CacheTestData.Key(1)));
        Assert.Equal(before, lease.Span.ToArray());

        // Twenty budgets of churn: the leased segment is retired, never reused.
        for (int i = 0; i < 60_000; i++)
        {
            cache.Set(CacheTestData.Key(i + 10), CacheTestData.Value(i + 10, 1, 300));
        }

        Assert.True(cache.GetStatistics().EvictedForCapacity > 0);
        Assert.Equal(before, lease.Span.ToArray());
        cache.Clear();
        Assert.Equal(before, lease.Span.ToArray());
        for (int i = 0; i < 10_000; i++)
        {
            cache.Set(CacheTestData.Key(i + 10), CacheTestData.Value(i + 10, 2, 300));
        }

        Assert.Equal(before, lease.Span.ToArray());
        Assert.True(cache.GetStatistics().PinnedBytes > 0);
        lease.Dispose();
        AllocationLedger.FlushQuarantine();
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);
        Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
    }

    [Fact]
    public void A_copy_disposed_twice_unpins_once_and_every_copy_throws_afterwards()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        cache.Set("a", CacheTestData.Value(1, 1, 64));
        cache.Set("b", CacheTestData.Value(2, 1, 64));
        Assert.True(cache.TryGet("a", out NativeCacheLease first));
        Assert.True(cache.TryGet("b", out NativeCacheLease second));
        NativeCacheLease copy = first;
        copy.Dispose();
        copy.Dispose();
        first.Dispose();
        Assert.False(first.IsOpen);
        Assert.False(copy.IsOpen);
        AssertEnded(first);
        AssertEnded(copy);

        // The second lease is still open: the double Dispose did not drop its pin (they may share a segment).
        Assert.True(second.IsOpen);
        Assert.Throws<InvalidOperationException>(cache.Dispose);
        cache.Clear();
        Assert.True(CacheTestData.IsIntact(second.Span, 2, out long version) && version == 1);
        second.Dispose();
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);
    }

    [Fact]
    public void Dispose_with_a_lease_open_names_it_frees_nothing_and_works_once_the_lease_ends()
    {
        var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        cache.Set("k", CacheTestData.Value(7, 1, 100));
        Assert.True(cache.TryGet("k", out NativeCacheLease lease));
        InvalidOperationException refused = Assert.Throws<InvalidOperationException>(cache.Dispose);
        Assert.Contains("1", refused.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(cache.Dispose);
        Assert.True(CacheTestData.IsIntact(lease.Span, 7, out _));
        // The cache still works: the refused Dispose changed nothing.
        Assert.True(cache.ContainsKey("k"u8.ToArray()));
        lease.Dispose();
        cache.Dispose();
        cache.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", "v"u8));
        Assert.Throws<ObjectDisposedException>(() => cache.TryGet("k", out _));
        Assert.Throws<ObjectDisposedException>(() => cache.GetStatistics());
        Assert.Throws<ObjectDisposedException>(cache.Clear);
        Assert.Throws<ObjectDisposedException>(cache.RemoveExpired);
        Assert.Throws<ObjectDisposedException>(() => cache.GetOrAdd("k"u8, 0, static (_, _, _) => { }));
        // The lease stays ended.
        AssertEnded(lease);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Many_Clears_with_leases_open_give_every_byte_back_when_the_leases_end(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        long liveBefore = AllocationLedger.LiveCount;
        var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 4 });
        const int Generations = 40;
        // A lease cannot be kept in an array: each generation's lease lives in a frame of the recursion,
        // open while the later generations are written and cleared, ended on the way back.
        OpenLeaseAndClear(cache, 0, Generations);
        Assert.Equal(Generations * 200L, cache.GetStatistics().Cleared);
        AllocationLedger.FlushQuarantine();
        NativeCacheStatistics after = cache.GetStatistics();
        Assert.Equal(0, after.PinnedBytes);
        Assert.Equal(0, after.AllocatedBytes);
        Assert.Equal(0, after.ArenaAllocatedBytes);
        cache.Dispose();
        AllocationLedger.FlushQuarantine();
        Assert.Equal(liveBefore, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_default_lease_holds_nothing_and_ends_nothing()
    {
        NativeCacheLease lease = default;
        Assert.False(lease.IsOpen);
        Assert.Equal(0, lease.Length);
        Assert.True(lease.Span.IsEmpty);
        lease.Dispose();
        lease.Dispose();
    }

    private static void OpenLeaseAndClear(NativeCache cache, int generation, int generations)
    {
        if (generation == generations)
        {
            NativeCacheStatistics pinned = cache.GetStatistics();
            Assert.True(pinned.PinnedBytes > 0);
            Assert.True(pinned.AllocatedBytes <= pinned.BudgetBytes, pinned.ToString());
            return;
        }

        for (int i = 0; i < 200; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, generation, 1000));
        }

        Assert.True(cache.TryGet(CacheTestData.Key(generation), out NativeCacheLease lease));
        cache.Clear();
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes, statistics.ToString());
        Assert.Equal(0, statistics.Entries);
        OpenLeaseAndClear(cache, generation + 1, generations);
        Assert.True(CacheTestData.IsIntact(lease.Span, generation, out long version) && version == generation);
        lease.Dispose();
    }

    // A ref struct cannot be captured by a lambda: each member is tried in turn.
    private static void AssertEnded(NativeCacheLease lease)
    {
        int thrown = 0;
        try
        {
            _ = lease.Span;
        }
        catch (ObjectDisposedException)
        {
            thrown++;
        }

        try
        {
            _ = lease.Length;
        }
        catch (ObjectDisposedException)
        {
            thrown++;
        }

        try
        {
            _ = lease.Read<long>();
        }
        catch (ObjectDisposedException)
        {
            thrown++;
        }

        Assert.Equal(3, thrown);
        Assert.False(lease.IsOpen);
    }

    [Fact]
    public void Count_and_BudgetBytes_after_Dispose_throw_ObjectDisposedException()
    {
        var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        cache.Set("k", "v"u8);
        Assert.Equal(1, cache.Count);
        cache.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Count);
        // The docs promise every member throws after Dispose, the budget too.
        Assert.Throws<ObjectDisposedException>(() => cache.BudgetBytes);
    }
}
