using System.Buffers;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;

namespace jemalloc.Caching.Tests;

/// <summary>Our adapter's answers to misuse: disposed caches, impossible keys and sizes, bad settings, canceled tokens.</summary>
public sealed class FailurePathTests
{
    private static readonly DistributedCacheEntryOptions NoExpiry = new();

    private static NativeDistributedCache NewCache(long budget = 16L << 20) => new(new NativeDistributedCacheOptions { BudgetBytes = budget });

    [Fact]
    public async Task Every_call_on_a_disposed_cache_throws_ObjectDisposedException_and_dispose_again_is_no_error()
    {
        NativeDistributedCache cache = NewCache();
        cache.Set("k", [1], NoExpiry);
        cache.Dispose();
        cache.Dispose();
        var destination = new ArrayBufferWriter<byte>();
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k"));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", [1], NoExpiry));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", new ReadOnlySequence<byte>([1]), NoExpiry));
        Assert.Throws<ObjectDisposedException>(() => cache.TryGet("k", destination));
        Assert.Throws<ObjectDisposedException>(() => cache.Refresh("k"));
        Assert.Throws<ObjectDisposedException>(() => cache.Remove("k"));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.GetAsync("k"));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.SetAsync("k", [1], NoExpiry));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.SetAsync("k", new ReadOnlySequence<byte>([1]), NoExpiry).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.TryGetAsync("k", destination).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.RefreshAsync("k"));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.RemoveAsync("k"));
    }

    [Fact]
    public void A_wrapped_cache_outlives_its_adapter_and_an_adapter_over_a_disposed_cache_throws_ObjectDisposedException()
    {
        using var shared = new NativeCache(16L << 20);
        var first = new NativeDistributedCache(shared);
        first.Set("k", [1], NoExpiry);
        first.Dispose();
        Assert.Throws<ObjectDisposedException>(() => first.Get("k"));
        Assert.True(shared.ContainsKey("k"u8));

        var second = new NativeDistributedCache(shared);
        Assert.Equal([1], second.Get("k"));
        shared.Dispose();
        Assert.Throws<ObjectDisposedException>(() => second.Get("k"));
        Assert.Throws<ObjectDisposedException>(() => second.Set("k", [2], NoExpiry));
    }

    [Fact]
    public void A_string_key_is_the_same_entry_as_its_UTF8_bytes_in_the_NativeCache()
    {
        using NativeDistributedCache cache = NewCache();
        cache.Set("ключ", [5, 6], NoExpiry);
        Assert.Equal([5, 6], cache.Cache.GetBytes("ключ"u8));
        cache.Cache.Set("€uro"u8, [7], default);
        Assert.Equal([7], cache.Get("€uro"));
    }

    [Fact]
    public void A_key_with_a_lone_surrogate_is_refused_as_the_NativeCache_itself_refuses_it()
    {
        using NativeDistributedCache cache = NewCache();
        // The add-on and the core encode alike: same exception type, parameter and message.
        foreach (string key in new[] { "\uD800", "\uDC00", "a\uD83Db", "\uDE00\uD83D", new string('k', 600) + "\uD800" })
        {
            var addOn = Assert.Throws<ArgumentException>(() => cache.Set(key, [1], NoExpiry));
            var core = Assert.Throws<ArgumentException>(() => cache.Cache.Set(key, [1]));
            Assert.Equal(addOn.ParamName, core.ParamName);
            Assert.Equal(addOn.Message, core.Message);
        }

        Assert.Equal(0, cache.Cache.Count);
    }

    [Fact]
    public void A_key_with_a_lone_surrogate_is_refused_rather_than_mixed_up_with_another()
    {
        using NativeDistributedCache cache = NewCache();
        // Lossy UTF-8 would make both U+FFFD: two keys, one entry.
        foreach (string key in new[] { "\uD800", "\uDC00", "a\uD83Db", "\uDE00\uD83D" })
        {
            var e = Assert.Throws<ArgumentException>(() => cache.Set(key, [1], NoExpiry));
            Assert.Equal("key", e.ParamName);
            Assert.Contains("surrogate", e.Message, StringComparison.Ordinal);
            Assert.Throws<ArgumentException>(() => cache.Get(key));
            Assert.Throws<ArgumentException>(() => cache.Remove(key));
            Assert.Throws<ArgumentException>(() => cache.Refresh(key));
            Assert.Throws<ArgumentException>(() => cache.TryGet(key, new ArrayBufferWriter<byte>()));
        }

        Assert.Equal(0, cache.Cache.Count);
        cache.Set("\uD83D\uDD11", [2], NoExpiry);
        Assert.Equal([2], cache.Get("\uD83D\uDD11"));
    }

    [Fact]
    public void A_key_is_measured_in_UTF8_bytes_up_to_the_NativeCache_limit()
    {
        using NativeDistributedCache cache = NewCache();
        string longest = new('k', NativeCache.MaxKeyLength);
        cache.Set(longest, [1], NoExpiry);
        Assert.Equal([1], cache.Get(longest));

        string oneTooMany = new('k', NativeCache.MaxKeyLength + 1);
        var e = Assert.Throws<ArgumentException>(() => cache.Set(oneTooMany, [1], NoExpiry));
        Assert.Equal("key", e.ParamName);
        Assert.Contains("65,537", e.Message, StringComparison.Ordinal);

        // 21,846 characters, 65,538 bytes.
        string euros = new('€', (NativeCache.MaxKeyLength / 3) + 1);
        Assert.Throws<ArgumentException>(() => cache.Get(euros));
        Assert.Equal(1, cache.Cache.Count);
    }

    [Fact]
    public void A_value_bigger_than_the_whole_budget_is_refused_and_the_old_value_stays()
    {
        using NativeDistributedCache cache = NewCache(NativeCache.MinimumBudgetBytes);
        cache.Set("k", [1], NoExpiry);
        var e = Assert.Throws<ArgumentException>(() => cache.Set("k", new byte[NativeCache.MinimumBudgetBytes + 1], NoExpiry));
        Assert.Contains("budget", e.Message, StringComparison.Ordinal);
        Assert.Equal([1], cache.Get("k"));
    }

    [Fact]
    public void A_sequence_of_gigabytes_is_refused_before_anything_is_copied()
    {
        using NativeDistributedCache cache = NewCache();
        // 3 GiB of segments over one 16 MiB array: longer than any entry could be.
        byte[] chunk = new byte[16 << 20];
        var segments = new BufferDistributedCacheContract.Segment(chunk, 0);
        BufferDistributedCacheContract.Segment last = segments;
        for (int i = 1; i < 192; i++)
        {
            last = last.Append(chunk);
        }

        var huge = new ReadOnlySequence<byte>(segments, 0, last, chunk.Length);
        Assert.Equal(3L << 30, huge.Length);
        var e = Assert.Throws<ArgumentException>(() => cache.Set("k", huge, NoExpiry));
        Assert.Contains("3,221,225,472", e.Message, StringComparison.Ordinal);
        Assert.Null(cache.Get("k"));
    }

    [Fact]
    public void Null_destinations_are_refused_with_ArgumentNullException_even_for_a_missing_key()
    {
        // RedisCache answers false for a missing key without looking at the destination.
        using NativeDistributedCache cache = NewCache();
        Assert.Equal("destination", Assert.Throws<ArgumentNullException>(() => cache.TryGet("missing", null!)).ParamName);
        // Thrown by the call itself, not carried by its task.
        Assert.Equal("destination", Assert.Throws<ArgumentNullException>(() => StartTryGetAsync(cache)).ParamName);
    }

    [Fact]
    public async Task A_canceled_token_cancels_before_the_call_does_anything_and_cancels_nothing_after()
    {
        using NativeDistributedCache cache = NewCache();
        using var canceled = new CancellationTokenSource();
        await canceled.CancelAsync();
        cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });

        Task<byte[]?> get = cache.GetAsync("k", canceled.Token);
        Assert.True(get.IsCanceled);
        Assert.True(cache.SetAsync("k", [2], NoExpiry, canceled.Token).IsCanceled);
        Assert.True(cache.SetAsync("k", new ReadOnlySequence<byte>([3]), NoExpiry, canceled.Token).AsTask().IsCanceled);
        Assert.True(cache.RemoveAsync("k", canceled.Token).IsCanceled);
        Assert.True(cache.RefreshAsync("k", canceled.Token).IsCanceled);
        var destination = new ArrayBufferWriter<byte>();
        Assert.True(cache.TryGetAsync("k", destination, canceled.Token).AsTask().IsCanceled);
        Assert.Equal(0, destination.WrittenCount);
        Assert.Equal([1], cache.Get("k"));
        Assert.Equal(0, cache.Cache.GetStatistics().Removed);

        // A token canceled after the call completed changes nothing.
        using var later = new CancellationTokenSource();
        await cache.SetAsync("k", [4], NoExpiry, later.Token);
        await later.CancelAsync();
        Assert.Equal([4], cache.Get("k"));
    }

    [Fact]
    public void Options_out_of_range_are_refused_when_the_cache_is_made()
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(NativeCache.MinimumBudgetBytes - 1));
        Assert.Contains("BudgetBytes", e.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeDistributedCache(new NativeDistributedCacheOptions { ShardCount = 3 }));
        Assert.Throws<ArgumentNullException>(() => new NativeDistributedCache((IOptions<NativeDistributedCacheOptions>)null!));
        Assert.Throws<ArgumentNullException>(() => new NativeDistributedCache(new NullOptions()));
        Assert.Throws<ArgumentNullException>(() => new NativeDistributedCache((NativeCache)null!));
    }

    private static void StartTryGetAsync(NativeDistributedCache cache) => cache.TryGetAsync("missing", null!).AsTask();

    private sealed class NullOptions : IOptions<NativeDistributedCacheOptions>
    {
        public NativeDistributedCacheOptions Value => null!;
    }
}
