using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheOptionsTests : LeakCheckedTest
{
    [Fact]
    public void Options_out_of_range_are_refused_naming_the_setting()
    {
        Assert.Throws<ArgumentNullException>(() => new NativeCache(null!));
        Assert.Throws<ArgumentNullException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, TimeProvider = null! }));
        var budget = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(NativeCache.MinimumBudgetBytes - 1));
        Assert.Contains("BudgetBytes", budget.ParamName, StringComparison.Ordinal);
        foreach (int shards in new[] { -1, 3, 2048 })
        {
            var error = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ShardCount = shards }));
            Assert.Contains("ShardCount", error.ParamName, StringComparison.Ordinal);
        }

        var crowded = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 1 << 20, ShardCount = 32 }));
        Assert.Contains("32 shards need a budget", crowded.Message, StringComparison.Ordinal);

        foreach (TimeSpan interval in new[] { TimeSpan.Zero, TimeSpan.FromSeconds(-1), TimeSpan.FromDays(100) })
        {
            var error = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ExpirationScanInterval = interval }));
            Assert.Contains("ExpirationScanInterval", error.ParamName, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(1 << 20, 0)]
    [InlineData(1 << 20, 16)]
    [InlineData(64 << 20, 1024)]
    [InlineData(64 << 20, 0)]
    [InlineData(64 << 20, 1)]
    public void Every_budget_and_shard_count_accepted_holds_entries_within_the_budget(long budget, int shards)
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = budget, ShardCount = shards });
        Assert.Equal(budget, cache.BudgetBytes);
        for (int i = 0; i < 5000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 900));
            Assert.True(cache.GetStatistics().AllocatedBytes <= budget);
        }

        Assert.True(cache.Count > 0);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(4999)), 4999, out _));
    }

    [Fact]
    public void The_counters_count_each_kind_of_operation()
    {
        using var cache = new NativeCache(8 << 20);
        cache.Set("a"u8, [1]);
        cache.Set("b"u8, [1, 2]);
        cache.Set("a"u8, [3]);
        Assert.NotNull(cache.GetBytes("a"u8));
        Assert.True(cache.TryCopyTo("b"u8, new byte[2], out _));
        Assert.Null(cache.GetBytes("c"u8));
        Assert.True(cache.ContainsKey("a"u8));
        Assert.True(cache.Remove("b"u8));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(2, statistics.Hits);
        Assert.Equal(1, statistics.Misses);
        Assert.Equal(3, statistics.Writes);
        Assert.Equal(1, statistics.Replaced);
        Assert.Equal(1, statistics.Removed);
        Assert.Equal(0, statistics.EvictedForCapacity);
        Assert.Equal(0, statistics.Expired);
        Assert.Equal(1, statistics.Entries);
        Assert.Equal(2, statistics.KeyValueBytes);
        Assert.Equal(8 << 20, statistics.BudgetBytes);
        Assert.Equal(2.0 / 3, statistics.HitRatio, 6);
        Assert.True(statistics.AllocatedBytes > 0);
        Assert.Equal(statistics.AllocatedBytes, statistics.ArenaAllocatedBytes);
    }
}
