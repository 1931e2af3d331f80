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
/// whose lifetime is under one second): an entry is checked gone 1.5 s after it should have expired, so
/// a loaded machine only delays that check; and it is checked present only when the check ended within
/// its lifetime of the last touch, a round stalled past that being run again with fresh keys.
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
    public async Task Absolute_expiries_end_entries_on_time_and_a_relative_one_wins_over_an_absolute_one() =>
        await InTimelyRounds(async key =>
        {
            var clock = Stopwatch.StartNew();
            DateTimeOffset now = DateTimeOffset.UtcNow;
            Cache.Set(key("relative"), [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = Lifetime });
            await Cache.SetAsync(key("absolute"), [2], new DistributedCacheEntryOptions { AbsoluteExpiration = now + Lifetime });
            Cache.Set(key("both"), [3], new DistributedCacheEntryOptions { AbsoluteExpiration = now.AddHours(1), AbsoluteExpirationRelativeToNow = Lifetime });
            Cache.Set(key("forever"), [4], NoExpiry);
            Cache.Set(key("later"), [5], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(10) });

            byte[]? relative = Cache.Get(key("relative"));
            byte[]? absolute = await Cache.GetAsync(key("absolute"));
            byte[]? both = Cache.Get(key("both"));
            if (!WithinLifetime(clock, TimeSpan.Zero))
            {
                return false;
            }

            Assert.Equal([1], relative);
            Assert.Equal([2], absolute);
            Assert.Equal([3], both);

            await WaitUntil(clock, Lifetime + Margin);
            Assert.Null(Cache.Get(key("relative")));
            Assert.Null(await Cache.GetAsync(key("absolute")));
            Assert.Null(Cache.Get(key("both")));
            Assert.Equal([4], Cache.Get(key("forever")));
            Assert.Equal([5], Cache.Get(key("later")));
            return true;
        });

    [Fact]
    public async Task Reads_and_refreshes_restart_a_sliding_expiry_and_an_untouched_entry_expires() =>
        await InTimelyRounds(async key =>
        {
            var clock = Stopwatch.StartNew();
            var sliding = new DistributedCacheEntryOptions { SlidingExpiration = Lifetime };
            Cache.Set(key("read"), [1], sliding);
            Cache.Set(key("refreshed"), [2], sliding);
            await Cache.SetAsync(key("untouched"), [3], sliding);
            TimeSpan untouchedWritten = clock.Elapsed;
            TimeSpan readTouched = TimeSpan.Zero, refreshTouched = TimeSpan.Zero;

            // Touched every 250 ms for two lifetimes: alive at the end only because each touch restarted it.
            while (clock.Elapsed - untouchedWritten < 2 * Lifetime)
            {
                TimeSpan touch = clock.Elapsed;
                byte[]? read = Cache.Get(key("read"));
                if (!WithinLifetime(clock, readTouched))
                {
                    return false;
                }

                Assert.Equal([1], read);
                readTouched = touch;
                touch = clock.Elapsed;
                await Cache.RefreshAsync(key("refreshed"));
                if (!WithinLifetime(clock, refreshTouched))
                {
                    return false;
                }

                refreshTouched = touch;
                Cache.Refresh(key("refreshed"));
                await Task.Delay(250);
            }

            Assert.Null(Cache.Get(key("untouched")));
            byte[]? stillRead = await Cache.GetAsync(key("read"));
            byte[]? stillRefreshed = Cache.Get(key("refreshed"));
            if (!WithinLifetime(clock, readTouched) || !WithinLifetime(clock, refreshTouched))
            {
                return false;
            }

            Assert.Equal([1], stillRead);
            Assert.Equal([2], stillRefreshed);

            var touched = Stopwatch.StartNew();
            await WaitUntil(touched, Lifetime + Margin);
            Assert.Null(Cache.Get(key("read")));
            Assert.Null(Cache.Get(key("refreshed")));
            return true;
        });

    [Fact]
    public async Task An_absolute_expiry_caps_a_sliding_one_however_often_the_entry_is_read() =>
        await InTimelyRounds(async key =>
        {
            var clock = Stopwatch.StartNew();
            Cache.Set(key("capped"), [1], new DistributedCacheEntryOptions { SlidingExpiration = Lifetime, AbsoluteExpirationRelativeToNow = Lifetime + TimeSpan.FromSeconds(0.5) });
            byte[]? first = Cache.Get(key("capped"));
            if (!WithinLifetime(clock, TimeSpan.Zero))
            {
                return false;
            }

            Assert.Equal([1], first);
            while (clock.Elapsed < Lifetime + Margin + TimeSpan.FromSeconds(0.5))
            {
                Cache.Get(key("capped"));
                await Task.Delay(250);
            }

            Assert.Null(Cache.Get(key("capped")));
            return true;
        });

    /// <summary>
    /// Whether the calls just made all ended within an entry's lifetime (less a slack for the engine's
    /// own clock) of <paramref name="touchedAt"/>, the moment on <paramref name="clock"/> before the call
    /// that last wrote or touched it: only then must the entry still have been there.
    /// </summary>
    private static bool WithinLifetime(Stopwatch clock, TimeSpan touchedAt) =>
        clock.Elapsed - touchedAt < Lifetime - TimeSpan.FromSeconds(0.3);

    /// <summary>
    /// Runs a real-clock scenario until one round is conclusive. A round returns false when the machine
    /// stalled it past an entry's lifetime before a check that the entry is still there: such a round
    /// proves nothing either way, so it is run again with fresh keys. A conclusive round's assertions
    /// all hold or the test fails, and five inconclusive rounds fail it too.
    /// </summary>
    private static async Task InTimelyRounds(Func<Func<string, string>, Task<bool>> round)
    {
        const int Rounds = 5;
        for (int attempt = 0; attempt < Rounds; attempt++)
        {
            string prefix = $"round{attempt}:";
            if (await round(name => prefix + name))
            {
                return;
            }
        }

        Assert.Fail($"The machine stalled each of {Rounds} rounds past an entry's {Lifetime.TotalSeconds} s lifetime before it could be checked.");
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
