using System.Buffers;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Caching.Tests;

/// <summary>
/// Our adapter's expiry on a fake clock (NativeDistributedCacheOptions.TimeProvider): the same rules
/// as the real-clock contract, checked to the millisecond on either side of each expiry.
/// </summary>
public sealed class FakeClockExpiryTests : IDisposable
{
    private static readonly DistributedCacheEntryOptions NoExpiry = new();
    private readonly FakeTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly NativeDistributedCache _cache;

    public FakeClockExpiryTests()
    {
        _cache = new NativeDistributedCache(new NativeDistributedCacheOptions
        {
            BudgetBytes = 16L << 20,
            TimeProvider = _clock,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
    }

    public void Dispose() => _cache.Dispose();

    private void Advance(double milliseconds) => _clock.Advance(TimeSpan.FromMilliseconds(milliseconds));

    [Fact]
    public void A_relative_expiry_ends_the_entry_after_its_lifetime_and_not_before()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Advance(9_999);
        Assert.Equal([1], _cache.Get("k"));
        Advance(2);
        Assert.Null(_cache.Get("k"));
        Assert.False(_cache.TryGet("k", new ArrayBufferWriter<byte>()));
    }

    [Fact]
    public void An_absolute_expiry_is_read_on_the_cache_clock()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddSeconds(10) });
        Advance(9_999);
        Assert.Equal([1], _cache.Get("k"));
        Advance(2);
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void An_absolute_expiry_in_the_past_of_the_cache_clock_is_refused_and_changes_nothing()
    {
        _cache.Set("k", [1], NoExpiry);
        DateTimeOffset past = _clock.GetUtcNow().AddTicks(-1);
        Assert.Throws<ArgumentOutOfRangeException>(() => _cache.Set("k", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = past }));
        Assert.Throws<ArgumentOutOfRangeException>(() => _cache.Set("k", Segments([2, 3]), new DistributedCacheEntryOptions { AbsoluteExpiration = past }));
        Assert.Equal([1], _cache.Get("k"));
        // The real clock is years past the fake one: the same moment is in the future of the cache's clock.
        _cache.Set("k", [4], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddSeconds(1) });
        Assert.Equal([4], _cache.Get("k"));
    }

    [Fact]
    public void A_relative_expiry_wins_over_an_absolute_one_as_with_Redis_and_MemoryCache()
    {
        _cache.Set("later", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddHours(1), AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        _cache.Set("sooner", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddSeconds(5), AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Advance(6_000);
        Assert.Equal([2], _cache.Get("sooner"));
        Advance(4_001);
        Assert.Null(_cache.Get("later"));
        Assert.Null(_cache.Get("sooner"));
    }

    [Fact]
    public void Reads_refreshes_and_buffer_reads_restart_a_sliding_expiry()
    {
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) };
        _cache.Set("k", [1], sliding);
        _cache.Set("untouched", [2], sliding);
        Advance(9_000);
        Assert.Equal([1], _cache.Get("k"));
        Advance(9_000);
        _cache.Refresh("k");
        Advance(9_000);
        Assert.True(_cache.TryGet("k", new ArrayBufferWriter<byte>()));
        Advance(9_000);
        Assert.Equal([1], _cache.Get("k"));
        Assert.Null(_cache.Get("untouched"));
        Advance(10_001);
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public async Task Async_reads_and_refreshes_restart_a_sliding_expiry_too()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) });
        Advance(9_000);
        Assert.Equal([1], await _cache.GetAsync("k"));
        Advance(9_000);
        await _cache.RefreshAsync("k");
        Advance(9_000);
        Assert.True(await _cache.TryGetAsync("k", new ArrayBufferWriter<byte>()));
        Advance(10_001);
        Assert.Null(await _cache.GetAsync("k"));
    }

    [Fact]
    public void An_absolute_expiry_caps_a_sliding_one()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10), AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(15) });
        Advance(9_000);
        Assert.Equal([1], _cache.Get("k"));
        Advance(5_999);
        Assert.Equal([1], _cache.Get("k"));
        Advance(2);
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void An_entry_without_expiry_outlives_any_wait_and_a_write_restarts_the_lifetime()
    {
        _cache.Set("forever", [1], NoExpiry);
        _cache.Set("rewritten", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Advance(8_000);
        _cache.Set("rewritten", [2], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Advance(8_000);
        Assert.Equal([2], _cache.Get("rewritten"));
        _cache.Set("rewritten", [3], NoExpiry);
        _clock.Advance(TimeSpan.FromDays(1000));
        Assert.Equal([1], _cache.Get("forever"));
        Assert.Equal([3], _cache.Get("rewritten"));
    }

    [Fact]
    public void Expired_entries_leave_the_cache_count_once_given_back()
    {
        for (int i = 0; i < 100; i++)
        {
            _cache.Set($"k{i}", new byte[100], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1 + (i % 2)) });
        }

        Advance(1_500);
        _cache.Cache.RemoveExpired();
        Assert.Equal(50, _cache.Cache.Count);
        Advance(1_000);
        _cache.Cache.RemoveExpired();
        Assert.Equal(0, _cache.Cache.Count);
    }

    private static ReadOnlySequence<byte> Segments(byte[] value) => BufferDistributedCacheContract.Segments(value, 1);
}
