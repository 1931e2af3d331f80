using System.Diagnostics;
using Microsoft.Extensions.Caching.Distributed;

namespace jemalloc.Caching.Tests;

/// <summary>
/// What an <see cref="IDistributedCache"/> does, written once and run against NativeDistributedCache,
/// Microsoft's MemoryDistributedCache and RedisCache on a Garnet server: the three must agree. Where
/// the engines differ by design (a past absolute expiry, a canceled token), each says which way it
/// goes and the test checks that way (docs/cache.md lists the differences).
/// </summary>
/// <remarks>
/// The expiry tests run on the real clock with lifetimes of 1.5 s (RedisCache does not write an entry
/// whose lifetime is under one second): an entry is checked present right after its write and gone
/// 1.5 s after it should have expired, so a loaded machine delays them without failing them.
/// </remarks>
public abstract class DistributedCacheContract : IDisposable
{
    private static readonly TimeSpan Lifetime = TimeSpan.FromSeconds(1.5);
    private static readonly TimeSpan Margin = TimeSpan.FromSeconds(1.5);

    /// <summary>The cache under test, new for each test.</summary>
    protected abstract IDistributedCache Cache { get; }

    /// <summary>Whether a write with an absolute expiry in the past throws (RedisCache, ours) or drops the entry (MemoryDistributedCache).</summary>
    protected virtual bool RejectsPastAbsoluteExpiration => true;

    /// <summary>Whether an asynchronous call with a canceled token is canceled (RedisCache, ours) or runs anyway (MemoryDistributedCache).</summary>
    protected virtual bool HonoursCancellation => true;

    /// <summary>Whether the cache keeps the very array given to Set and gives it to every Get (MemoryDistributedCache) rather than copies (RedisCache, ours).</summary>
    protected virtual bool SharesArrays => false;

    public abstract void Dispose();

    private static DistributedCacheEntryOptions NoExpiry => new();

    [Fact]
    public void A_missing_key_reads_as_null()
    {
        Assert.Null(Cache.Get("missing"));
    }

    [Fact]
    public async Task A_missing_key_reads_as_null_async()
    {
        Assert.Null(await Cache.GetAsync("missing"));
    }

    [Fact]
    public void A_value_written_is_read_back()
    {
        byte[] value = TestValues.Make("k", 1, 300);
        Cache.Set("k", value, NoExpiry);
        Assert.Equal(value, Cache.Get("k"));
    }

    [Fact]
    public async Task A_value_written_is_read_back_async()
    {
        byte[] value = TestValues.Make("k", 1, 300);
        await Cache.SetAsync("k", value, NoExpiry);
        Assert.Equal(value, await Cache.GetAsync("k"));
    }

    [Fact]
    public void The_array_given_to_set_and_the_one_read_are_copies_or_the_same_array_as_the_engine_says()
    {
        byte[] value = TestValues.Make("k", 1, 64);
        Cache.Set("k", value, NoExpiry);
        if (SharesArrays)
        {
            Assert.Same(value, Cache.Get("k"));
            return;
        }

        value[20] ^= 0xFF;
        byte[] read = Cache.Get("k")!;
        read[21] ^= 0xFF;
        Assert.Equal(1, TestValues.VersionOf("k", Cache.Get("k")));
    }

    [Fact]
    public void A_write_replaces_the_value()
    {
        Cache.Set("k", TestValues.Make("k", 1, 100), NoExpiry);
        Cache.Set("k", TestValues.Make("k", 2, 5000), NoExpiry);
        byte[] read = Cache.Get("k")!;
        Assert.Equal(5000, read.Length);
        Assert.Equal(2, TestValues.VersionOf("k", read));
    }

    [Fact]
    public void An_empty_value_is_a_value()
    {
        Cache.Set("empty", [], NoExpiry);
        byte[]? read = Cache.Get("empty");
        Assert.NotNull(read);
        Assert.Empty(read);
    }

    [Fact]
    public void The_empty_string_is_a_key_like_any_other()
    {
        Cache.Set("", [7], NoExpiry);
        Assert.Equal([7], Cache.Get(""));
        Assert.Null(Cache.Get(" "));
        Cache.Remove("");
        Assert.Null(Cache.Get(""));
    }

    [Fact]
    public void Keys_are_exact_strings_in_any_script()
    {
        string[] keys = ["ключ", "Ключ", "键🔑", "e\u0301", "\u00e9", "a b", "a\tb", "a\0b", "a"];
        for (int i = 0; i < keys.Length; i++)
        {
            Cache.Set(keys[i], TestValues.Make(keys[i], i, 40), NoExpiry);
        }

        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(i, TestValues.VersionOf(keys[i], Cache.Get(keys[i])));
        }
    }

    [Fact]
    public void Remove_takes_the_key_out_and_a_missing_key_is_no_error()
    {
        Cache.Set("k", [1, 2, 3], NoExpiry);
        Cache.Set("other", [4], NoExpiry);
        Cache.Remove("k");
        Assert.Null(Cache.Get("k"));
        Assert.Equal([4], Cache.Get("other"));
        Cache.Remove("k");
        Cache.Remove("never-written");
    }

    [Fact]
    public async Task Remove_takes_the_key_out_async()
    {
        await Cache.SetAsync("k", [1, 2, 3], NoExpiry);
        await Cache.RemoveAsync("k");
        Assert.Null(await Cache.GetAsync("k"));
        await Cache.RemoveAsync("never-written");
    }

    [Fact]
    public async Task Refresh_of_a_missing_key_is_no_error_and_writes_nothing()
    {
        Cache.Refresh("never-written");
        await Cache.RefreshAsync("never-written-either");
        Assert.Null(Cache.Get("never-written"));
        Assert.Null(await Cache.GetAsync("never-written-either"));
    }

    [Fact]
    public async Task Refresh_leaves_the_value_as_it_is()
    {
        byte[] value = TestValues.Make("k", 3, 1000);
        Cache.Set("k", value, new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(5) });
        Cache.Refresh("k");
        await Cache.RefreshAsync("k");
        Assert.Equal(value, Cache.Get("k"));
    }

    [Theory]
    [InlineData(3 << 20)]
    [InlineData(8 << 20)]
    public void A_value_of_several_MiB_is_read_back_whole(int length)
    {
        byte[] value = TestValues.Make("big", length, length);
        Cache.Set("big", value, NoExpiry);
        byte[] read = Cache.Get("big")!;
        Assert.Equal(length, read.Length);
        Assert.Equal(length, TestValues.VersionOf("big", read));
    }

    [Fact]
    public async Task Values_of_several_MiB_side_by_side_are_read_back_whole_async()
    {
        const int Length = 5 << 20;
        for (int i = 0; i < 4; i++)
        {
            await Cache.SetAsync($"big{i}", TestValues.Make($"big{i}", i, Length + i), NoExpiry);
        }

        for (int i = 0; i < 4; i++)
        {
            byte[] read = (await Cache.GetAsync($"big{i}"))!;
            Assert.Equal(Length + i, read.Length);
            Assert.Equal(i, TestValues.VersionOf($"big{i}", read));
        }
    }

    [Fact]
    public async Task Many_keys_are_each_read_back_with_their_own_value()
    {
        const int Keys = 5000;
        for (int start = 0; start < Keys; start += 250)
        {
            await Task.WhenAll(Enumerable.Range(start, 250).Select(i => Cache.SetAsync($"key:{i}", TestValues.Make($"key:{i}", i, 16 + (i % 200)), NoExpiry)));
        }

        for (int start = 0; start < Keys; start += 250)
        {
            byte[]?[] read = await Task.WhenAll(Enumerable.Range(start, 250).Select(i => Cache.GetAsync($"key:{i}")));
            for (int j = 0; j < read.Length; j++)
            {
                int i = start + j;
                Assert.True(read[j] is not null, $"key:{i} is missing");
                Assert.Equal(16 + (i % 200), read[j]!.Length);
                Assert.Equal(i, TestValues.VersionOf($"key:{i}", read[j]));
            }
        }
    }

    [Fact]
    public async Task Threads_writing_reading_and_removing_the_same_keys_only_ever_read_values_written_for_them()
    {
        const int Keys = 32, Workers = 6, Operations = 400;
        int[] lastVersion = new int[Workers];
        await Task.WhenAll(Enumerable.Range(0, Workers).Select(worker => Task.Run(async () =>
        {
            var random = new Random(worker);
            for (int op = 0; op < Operations; op++)
            {
                string key = $"shared:{random.Next(Keys)}";
                switch (random.Next(10))
                {
                    case < 4:
                        int version = (worker << 16) | op;
                        byte[] value = TestValues.Make(key, version, 8 + random.Next(4000));
                        if ((op & 1) == 0)
                        {
                            Cache.Set(key, value, NoExpiry);
                        }
                        else
                        {
                            await Cache.SetAsync(key, value, NoExpiry);
                        }

                        break;
                    case < 9:
                        byte[]? read = (op & 1) == 0 ? Cache.Get(key) : await Cache.GetAsync(key);
                        if (read is not null)
                        {
                            TestValues.VersionOf(key, read);
                        }

                        break;
                    default:
                        await Cache.RemoveAsync(key);
                        break;
                }
            }

            lastVersion[worker] = Operations;
        })));

        Assert.All(lastVersion, done => Assert.Equal(Operations, done));
        for (int k = 0; k < Keys; k++)
        {
            byte[]? read = Cache.Get($"shared:{k}");
            if (read is not null)
            {
                int version = TestValues.VersionOf($"shared:{k}", read);
                Assert.InRange(version >> 16, 0, Workers - 1);
            }
        }
    }

    [Fact]
    public void Null_keys_values_and_options_are_refused_with_ArgumentNullException()
    {
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.Get(null!)).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.Set(null!, [1], NoExpiry)).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.Refresh(null!)).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.Remove(null!)).ParamName);
        // RedisCache names the value "array" (it converts it first); the type is what all three agree on.
        Assert.Throws<ArgumentNullException>(() => Cache.Set("k", null!, NoExpiry));
        Assert.Equal("options", Assert.Throws<ArgumentNullException>(() => Cache.Set("k", [1], null!)).ParamName);
        Assert.Null(Cache.Get("k"));
    }

    [Fact]
    public async Task Null_keys_values_and_options_are_refused_with_ArgumentNullException_async()
    {
        // Thrown by the call or carried by its task: either way the await throws.
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.GetAsync(null!))).ParamName);
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync(null!, [1], NoExpiry))).ParamName);
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.RefreshAsync(null!))).ParamName);
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.RemoveAsync(null!))).ParamName);
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync("k", null!, NoExpiry));
        Assert.Equal("options", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync("k", [1], null!))).ParamName);
        Assert.Null(await Cache.GetAsync("k"));
    }

    [Fact]
    public void An_absolute_expiry_in_the_past_is_refused_or_leaves_no_entry_as_the_engine_says()
    {
        Cache.Set("k", TestValues.Make("k", 1, 50), NoExpiry);
        var past = new DistributedCacheEntryOptions { AbsoluteExpiration = DateTimeOffset.UtcNow.AddSeconds(-5) };
        if (RejectsPastAbsoluteExpiration)
        {
            var e = Assert.Throws<ArgumentOutOfRangeException>(() => Cache.Set("k", TestValues.Make("k", 2, 50), past));
            Assert.Contains("future", e.Message, StringComparison.OrdinalIgnoreCase);
            Assert.Equal(1, TestValues.VersionOf("k", Cache.Get("k")));
        }
        else
        {
            Cache.Set("k", TestValues.Make("k", 2, 50), past);
            Assert.Null(Cache.Get("k"));
        }
    }

    [Fact]
    public async Task Calls_with_a_canceled_token_are_canceled_and_change_nothing_or_run_as_the_engine_says()
    {
        using var canceled = new CancellationTokenSource();
        await canceled.CancelAsync();
        Cache.Set("kept", [1], NoExpiry);
        if (HonoursCancellation)
        {
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.GetAsync("kept", canceled.Token));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.SetAsync("new", [2], NoExpiry, canceled.Token));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.RefreshAsync("kept", canceled.Token));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.RemoveAsync("kept", canceled.Token));
            Assert.Null(Cache.Get("new"));
            Assert.Equal([1], Cache.Get("kept"));
        }
        else
        {
            Assert.Equal([1], await Cache.GetAsync("kept", canceled.Token));
            await Cache.SetAsync("new", [2], NoExpiry, canceled.Token);
            await Cache.RemoveAsync("kept", canceled.Token);
            Assert.Equal([2], Cache.Get("new"));
            Assert.Null(Cache.Get("kept"));
        }
    }

    [Fact]
    public async Task Absolute_expiries_end_entries_on_time_and_a_relative_one_wins_over_an_absolute_one()
    {
        var written = Stopwatch.StartNew();
        DateTimeOffset now = DateTimeOffset.UtcNow;
        Cache.Set("relative", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = Lifetime });
        await Cache.SetAsync("absolute", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = now + Lifetime });
        Cache.Set("both", [3], new DistributedCacheEntryOptions { AbsoluteExpiration = now.AddHours(1), AbsoluteExpirationRelativeToNow = Lifetime });
        Cache.Set("forever", [4], NoExpiry);
        Cache.Set("later", [5], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(10) });

        Assert.Equal([1], Cache.Get("relative"));
        Assert.Equal([2], await Cache.GetAsync("absolute"));
        Assert.Equal([3], Cache.Get("both"));

        await WaitUntil(written, Lifetime + Margin);
        Assert.Null(Cache.Get("relative"));
        Assert.Null(await Cache.GetAsync("absolute"));
        Assert.Null(Cache.Get("both"));
        Assert.Equal([4], Cache.Get("forever"));
        Assert.Equal([5], Cache.Get("later"));
    }

    [Fact]
    public async Task Reads_and_refreshes_restart_a_sliding_expiry_and_an_untouched_entry_expires()
    {
        var written = Stopwatch.StartNew();
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = Lifetime };
        Cache.Set("read", [1], sliding);
        Cache.Set("refreshed", [2], sliding);
        await Cache.SetAsync("untouched", [3], sliding);

        // Touched every 250 ms for two lifetimes: alive at the end only because each touch restarted it.
        while (written.Elapsed < 2 * Lifetime)
        {
            Assert.Equal([1], Cache.Get("read"));
            await Cache.RefreshAsync("refreshed");
            Cache.Refresh("refreshed");
            await Task.Delay(250);
        }

        Assert.Null(Cache.Get("untouched"));
        Assert.Equal([1], await Cache.GetAsync("read"));
        Assert.Equal([2], Cache.Get("refreshed"));

        var touched = Stopwatch.StartNew();
        await WaitUntil(touched, Lifetime + Margin);
        Assert.Null(Cache.Get("read"));
        Assert.Null(Cache.Get("refreshed"));
    }

    [Fact]
    public async Task An_absolute_expiry_caps_a_sliding_one_however_often_the_entry_is_read()
    {
        var written = Stopwatch.StartNew();
        Cache.Set("capped", [1], new DistributedCacheEntryOptions { SlidingExpiration = Lifetime, AbsoluteExpirationRelativeToNow = Lifetime + TimeSpan.FromSeconds(0.5) });
        Assert.Equal([1], Cache.Get("capped"));
        while (written.Elapsed < Lifetime + Margin + TimeSpan.FromSeconds(0.5))
        {
            Cache.Get("capped");
            await Task.Delay(250);
        }

        Assert.Null(Cache.Get("capped"));
    }

    private static async Task WaitUntil(Stopwatch since, TimeSpan elapsed)
    {
        TimeSpan left = elapsed - since.Elapsed;
        if (left > TimeSpan.Zero)
        {
            await Task.Delay(left);
        }
    }
}
