using System.Buffers;
using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheExpiryTests : LeakCheckedTest
{
    private readonly FakeTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));

    private NativeCache NewCache(TimeSpan? scanInterval = null, int shards = 1) => new(new NativeCacheOptions
    {
        BudgetBytes = 8 << 20,
        ShardCount = shards,
        TimeProvider = _clock,
        ExpirationScanInterval = scanInterval ?? Timeout.InfiniteTimeSpan,
    });

    [Fact]
    public void An_absolute_expiry_ends_the_entry_at_its_moment()
    {
        using NativeCache cache = NewCache();
        cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddSeconds(10) });
        _clock.Advance(TimeSpan.FromSeconds(9));
        Assert.Equal([1], cache.GetBytes("k"u8));
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.Null(cache.GetBytes("k"u8));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(1, statistics.Expired);
        Assert.Equal(1, statistics.Misses);
        Assert.Equal(1, statistics.Hits);
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void A_relative_expiry_counts_from_the_write()
    {
        using NativeCache cache = NewCache();
        cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(5) });
        _clock.Advance(TimeSpan.FromSeconds(4));
        Assert.True(cache.ContainsKey("k"u8));
        // Reading does not push an absolute expiry.
        Assert.NotNull(cache.GetBytes("k"u8));
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.False(cache.ContainsKey("k"u8));
    }

    [Fact]
    public void A_sliding_expiry_is_pushed_on_by_reads_and_refreshes_only()
    {
        using NativeCache cache = NewCache();
        cache.Set("k"u8, [1], new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) });
        for (int i = 0; i < 5; i++)
        {
            _clock.Advance(TimeSpan.FromSeconds(6));
            if (i % 2 == 0)
            {
                Assert.NotNull(cache.GetBytes("k"u8));
            }
            else
            {
                Assert.True(cache.Refresh("k"u8));
            }
        }

        // ContainsKey does not count as a read.
        _clock.Advance(TimeSpan.FromSeconds(6));
        Assert.True(cache.ContainsKey("k"u8));
        _clock.Advance(TimeSpan.FromSeconds(4));
        Assert.False(cache.ContainsKey("k"u8));
        Assert.False(cache.Refresh("k"u8));
    }

    [Fact]
    public void With_both_the_entry_ends_at_whichever_comes_first()
    {
        using NativeCache cache = NewCache();
        var options = new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10), AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(15) };
        cache.Set("k"u8, [1], options);
        _clock.Advance(TimeSpan.FromSeconds(7));
        Assert.NotNull(cache.GetBytes("k"u8));
        _clock.Advance(TimeSpan.FromSeconds(7));
        Assert.NotNull(cache.GetBytes("k"u8));
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.Null(cache.GetBytes("k"u8));

        cache.Set("s"u8, [2], options);
        _clock.Advance(TimeSpan.FromSeconds(10));
        Assert.Null(cache.GetBytes("s"u8));
    }

    [Fact]
    public void Expiry_options_that_are_not_in_the_future_are_refused_and_write_nothing()
    {
        using NativeCache cache = NewCache();
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow() }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddDays(-1) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.Zero }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [1], new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(-1) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [1], new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.Zero }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.GetOrAdd("k"u8, 0, static (_, _, w) => w.Write<byte>([1]), new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(-2) }));
        Assert.Equal(0, cache.Count);
        Assert.Equal(0, cache.GetStatistics().Writes);
        // A far-off expiry is fine.
        cache.Set("far"u8, [1], new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.MaxValue, SlidingExpiration = TimeSpan.MaxValue });
        Assert.True(cache.ContainsKey("far"u8));
    }

    [Fact]
    public void RemoveExpired_gives_the_memory_of_expired_entries_back_visiting_only_expired_segments()
    {
        using NativeCache cache = NewCache();
        for (int i = 0; i < 3000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 1000), new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(5) });
        }

        for (int i = 3000; i < 3100; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 1000));
        }

        long before = cache.GetStatistics().AllocatedBytes;
        Assert.True(before > 3_000_000);
        _clock.Advance(TimeSpan.FromSeconds(6));
        cache.RemoveExpired();
        NativeCacheStatistics after = cache.GetStatistics();
        Assert.Equal(3000, after.Expired);
        Assert.Equal(100, after.Entries);
        Assert.True(after.AllocatedBytes < before - 2_800_000, $"{after.AllocatedBytes:N0} bytes held after the sweep, {before:N0} before.");
        Assert.Equal(after.AllocatedBytes, after.ArenaAllocatedBytes);
        for (int i = 3000; i < 3100; i++)
        {
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(i)), i, out _));
        }
    }

    [Fact]
    public void A_sliding_entry_read_since_survives_the_sweep_of_its_segment()
    {
        using NativeCache cache = NewCache();
        var sliding = new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(4) };
        for (int i = 0; i < 500; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 500), sliding);
        }

        _clock.Advance(TimeSpan.FromSeconds(3));
        Assert.NotNull(cache.GetBytes(CacheTestData.Key(7)));
        _clock.Advance(TimeSpan.FromSeconds(2));
        cache.RemoveExpired();
        Assert.Equal(1, cache.Count);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(7)), 7, out _));
        _clock.Advance(TimeSpan.FromSeconds(5));
        cache.RemoveExpired();
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void The_timer_gives_expired_memory_back_without_a_call()
    {
        using NativeCache cache = NewCache(TimeSpan.FromSeconds(1), shards: 2);
        for (int i = 0; i < 2000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 1000), new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(3) });
        }

        long before = cache.GetStatistics().AllocatedBytes;
        // The fake clock runs the timer's ticks as it passes them.
        _clock.Advance(TimeSpan.FromSeconds(5));
        NativeCacheStatistics after = cache.GetStatistics();
        Assert.Equal(2000, after.Expired);
        Assert.Equal(0, after.Entries);
        Assert.True(after.AllocatedBytes < before - 1_800_000, $"{after.AllocatedBytes:N0} bytes held after the timer, {before:N0} before.");
    }

    [Fact]
    public void Writes_sweep_expired_segments_on_their_own()
    {
        using NativeCache cache = NewCache(TimeSpan.FromSeconds(1));
        for (int i = 0; i < 2000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 1000), new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(2) });
        }

        // Past the deadline without the timer firing (the fake clock's timer only runs on Advance, which it does here, so stop it first).
        _clock.AutoAdvanceAmount = TimeSpan.Zero;
        _clock.SetUtcNow(_clock.GetUtcNow().AddSeconds(3));
        for (int i = 0; i < 200; i++)
        {
            cache.Set(CacheTestData.Key(100_000 + i), [1]);
        }

        Assert.Equal(2000, cache.GetStatistics().Expired);
    }
}
