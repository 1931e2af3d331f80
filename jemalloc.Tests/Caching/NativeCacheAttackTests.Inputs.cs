using System.Buffers;
using System.Runtime.InteropServices;

namespace jemalloc.Tests.Caching;

/// <summary>Bad keys, absurd sizes, options at their limits and clocks that misbehave.</summary>
public sealed partial class NativeCacheAttackTests
{
    [Fact]
    public void Keys_of_0_bytes_and_64_KiB_work_and_64_KiB_plus_1_is_refused_by_every_member()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 1 });
        byte[] longest = new byte[NativeCache.MaxKeyLength];
        longest.AsSpan().Fill(0xA5);
        byte[] tooLong = new byte[NativeCache.MaxKeyLength + 1];

        cache.Set(ReadOnlySpan<byte>.Empty, "empty"u8);
        cache.Set(longest, "longest"u8);
        // The empty string is the empty key: this replaces the first entry.
        cache.Set("", "string empty"u8);
        Assert.Equal("string empty"u8.ToArray(), cache.GetBytes(ReadOnlySpan<byte>.Empty));
        Assert.Equal("longest"u8.ToArray(), cache.GetBytes(longest));
        // A key one byte shorter is another key.
        Assert.Null(cache.GetBytes(longest.AsSpan(1)));

        Assert.Throws<ArgumentException>(() => cache.Set(tooLong, "v"u8));
        Assert.Throws<ArgumentException>(() => cache.Set(tooLong, new ReadOnlySequence<byte>("v"u8.ToArray())));
        Assert.Throws<ArgumentException>(() => cache.TryGet(tooLong, out _));
        Assert.Throws<ArgumentException>(() => cache.GetBytes(tooLong));
        Assert.Throws<ArgumentException>(() => cache.ContainsKey(tooLong));
        Assert.Throws<ArgumentException>(() => cache.Remove(tooLong));
        Assert.Throws<ArgumentException>(() => cache.Refresh(tooLong));
        Assert.Throws<ArgumentException>(() => cache.TryCopyTo(tooLong, new byte[8], out _));
        Assert.Throws<ArgumentException>(() => cache.TryWriteTo(tooLong, new ArrayBufferWriter<byte>()));
        Assert.Throws<ArgumentException>(() => cache.TryGetValue(tooLong, out long _));
        Assert.Throws<ArgumentException>(() => cache.SetValue(tooLong, 5L));
        Assert.Throws<ArgumentException>(() => cache.GetOrAdd(tooLong, 0, static (_, _, writer) => writer.Write("v"u8)));
        Assert.Throws<ArgumentException>(() => cache.Set(new string('x', NativeCache.MaxKeyLength + 1), "v"u8));
        // 21,846 three-byte characters: fewer than 65,537 chars, more than 65,536 bytes.
        Assert.Throws<ArgumentException>(() => cache.Set(new string('\u20AC', 21_846), "v"u8));
        Assert.Equal(2, cache.Count);
        Assert.Equal(3, cache.GetStatistics().Writes);
        Assert.Equal(1, cache.GetStatistics().Replaced);

        Assert.True(cache.Remove(ReadOnlySpan<byte>.Empty));
        Assert.True(cache.Remove(longest));
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public async Task GetOrAddAsync_refuses_a_key_of_64_KiB_plus_1()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        await Assert.ThrowsAsync<ArgumentException>(async () => await cache.GetOrAddAsync(
            new byte[NativeCache.MaxKeyLength + 1], 0, static (_, _, _) => ValueTask.CompletedTask, static (value, _) => value.Length));
    }

    [Fact]
    public void A_value_bigger_than_the_budget_is_refused_and_the_old_value_stays()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        cache.Set("k", CacheTestData.Value(1, 1, 100));
        NativeCacheStatistics before = cache.GetStatistics();
        byte[] huge = new byte[(int)NativeCache.MinimumBudgetBytes + 1];
        Assert.Throws<ArgumentException>(() => cache.Set("k", huge));
        Assert.Throws<ArgumentException>(() => cache.Set("k"u8, new ReadOnlySequence<byte>(huge)));
        Assert.Throws<ArgumentException>(() => cache.GetOrAdd("new"u8, huge, static (_, value, writer) => writer.Write(value)).Dispose());
        Assert.True(CacheTestData.IsIntact(cache.GetBytes("k"u8), 1, out long version) && version == 1);
        Assert.False(cache.ContainsKey("new"u8));
        NativeCacheStatistics after = cache.GetStatistics();
        Assert.Equal(before.Entries, after.Entries);
        Assert.Equal(before.Writes, after.Writes);
        Assert.True(after.AllocatedBytes <= after.BudgetBytes);
    }

    [Fact]
    public void A_sequence_of_about_int_MaxValue_bytes_or_more_is_refused_without_being_read()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        // One 1 MiB array repeated: the sequence claims gigabytes while holding 1 MiB.
        byte[] chunk = new byte[1 << 20];
        foreach (long length in new[] { (long)int.MaxValue - 7, int.MaxValue, (long)int.MaxValue + 1, 8L << 30 })
        {
            ReadOnlySequence<byte> value = RepeatedSequence(chunk, length);
            Assert.Equal(length, value.Length);
            Assert.Throws<ArgumentException>(() => cache.Set("big"u8, value));
        }

        Assert.Equal(0, cache.Count);
        Assert.Equal(0, cache.GetStatistics().Writes);
    }

    [Fact]
    public void The_minimum_budget_holds_a_churn_of_1_byte_values_within_the_budget()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 16 });
        byte[] value = [42];
        for (int i = 0; i < 300_000; i++)
        {
            cache.Set(CacheTestData.Key(i), value);
            if (i % 10_000 == 0)
            {
                NativeCacheStatistics sample = cache.GetStatistics();
                Assert.True(sample.AllocatedBytes <= sample.BudgetBytes, sample.ToString());
            }
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes, statistics.ToString());
        Assert.True(statistics.EvictedForCapacity > 0);
        Assert.Equal(300_000, statistics.Writes);
        // Every write is in the cache, was evicted, or nothing else: no entry vanished uncounted.
        Assert.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared);
        Assert.Equal(statistics.Entries, cache.Count);
        Assert.Equal([42], cache.GetBytes(CacheTestData.Key(299_999)));
        Assert.Equal(statistics.Entries, statistics.KeyValueBytes / 9);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(2048)]
    [InlineData(int.MinValue)]
    public void A_shard_count_out_of_range_is_refused(int shards)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 64L << 20, ShardCount = shards }));
    }

    [Fact]
    public void Shard_counts_at_their_limits_work()
    {
        // 1,024 shards need 64 MiB (one per 64 KiB); 17 shards of 1 MiB would be more than one per 64 KiB.
        using (var most = new NativeCache(new NativeCacheOptions { BudgetBytes = 64L << 20, ShardCount = 1024 }))
        {
            for (int i = 0; i < 5000; i++)
            {
                most.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 64));
            }

            Assert.Equal(5000, most.Count);
        }

        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = (64L << 20) - 1, ShardCount = 1024 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 32 }));
        using var least = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 16 });
        least.Set("k", "v"u8);
        Assert.Equal("v"u8.ToArray(), least.GetBytes("k"u8));
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    [InlineData(long.MinValue)]
    [InlineData(NativeCache.MinimumBudgetBytes - 1)]
    public void A_budget_below_the_minimum_is_refused(long budget)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(budget));
    }

    [Fact]
    public void Scan_intervals_at_their_limits()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ExpirationScanInterval = TimeSpan.Zero }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ExpirationScanInterval = TimeSpan.FromTicks(-1) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ExpirationScanInterval = TimeSpan.MinValue }));
        // The smallest and the largest positive intervals: a timer of one tick, and one that never fires.
        foreach (TimeSpan interval in new[] { TimeSpan.FromTicks(1), TimeSpan.MaxValue, Timeout.InfiniteTimeSpan })
        {
            try
            {
                using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ExpirationScanInterval = interval });
                cache.Set("k", "v"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromHours(1) });
                Assert.Equal("v"u8.ToArray(), cache.GetBytes("k"u8));
            }
            catch (ArgumentOutOfRangeException) when (interval == Timeout.InfiniteTimeSpan || interval == TimeSpan.MaxValue)
            {
                // Refusing an interval no timer can take is as good as taking it; a crash or another exception is not.
            }
        }
    }

    [Fact]
    public void Expiry_with_a_clock_that_jumps_backwards_neither_resurrects_nor_loses_entries_early()
    {
        var clock = new SettableClock(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, TimeProvider = clock, ExpirationScanInterval = TimeSpan.FromDays(1) });
        cache.Set("abs", "a"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(10) });
        cache.Set("slide", "s"u8, new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(10) });

        // Back an hour: nothing expires (the deadlines are further away, not passed).
        clock.Now -= TimeSpan.FromHours(1);
        cache.RemoveExpired();
        Assert.True(cache.ContainsKey("abs"u8));
        Assert.True(cache.TryGet("slide", out NativeCacheLease lease));
        lease.Dispose();

        // Forward again past both deadlines (the sliding read in the past may have pulled its deadline back: it must not be later).
        clock.Now += TimeSpan.FromHours(1) + TimeSpan.FromMinutes(11);
        Assert.False(cache.ContainsKey("abs"u8));
        Assert.False(cache.ContainsKey("slide"u8));
        cache.RemoveExpired();
        Assert.Equal(0, cache.Count);
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(2, statistics.Expired);

        // A write made while the clock is behind, read once the clock is back: it expires by its own deadline.
        clock.Now -= TimeSpan.FromDays(365);
        cache.Set("past", "p"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        clock.Now += TimeSpan.FromDays(365);
        Assert.False(cache.ContainsKey("past"u8));
        Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
    }

    [Fact]
    public void A_clock_that_throws_surfaces_as_its_exception_and_leaves_the_cache_usable()
    {
        var clock = new SettableClock(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, TimeProvider = clock, ExpirationScanInterval = TimeSpan.FromDays(1) });
        cache.Set("plain", "p"u8);
        cache.Set("timed", "t"u8, new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
        clock.Throws = true;
        // The clock's exception, not a crash nor a lock left held; which calls need the clock is the cache's business.
        for (int i = 0; i < 200; i++)
        {
            try
            {
                cache.Set(CacheTestData.Key(i), "x"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
            }
            catch (ClockFailedException)
            {
            }

            try
            {
                cache.Set(CacheTestData.Key(1000 + i), "y"u8);
            }
            catch (ClockFailedException)
            {
            }

            try
            {
                _ = cache.GetBytes("timed"u8);
            }
            catch (ClockFailedException)
            {
            }
        }

        try
        {
            cache.RemoveExpired();
        }
        catch (ClockFailedException)
        {
        }

        clock.Throws = false;
        Assert.Equal("p"u8.ToArray(), cache.GetBytes("plain"u8));
        Assert.Equal("t"u8.ToArray(), cache.GetBytes("timed"u8));
        cache.Set("after", "a"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        Assert.Equal("a"u8.ToArray(), cache.GetBytes("after"u8));
        cache.Clear();
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void Struct_keys_with_padding_bytes_are_their_in_memory_bytes()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        var key = new Padded { Small = 1, Large = 2 };
        cache.SetValue(key, 99L);
        Assert.True(cache.TryGetValue(key, out long value));
        Assert.Equal(99L, value);
        Assert.True(cache.ContainsKey(MemoryMarshal.AsBytes(new ReadOnlySpan<Padded>(in key))));
        Assert.Equal(16, MemoryMarshal.AsBytes(new ReadOnlySpan<Padded>(in key)).Length);
        Assert.True(cache.Remove(key));
        Assert.False(cache.TryGetValue(key, out value));
        Assert.Throws<InvalidOperationException>(() =>
        {
            cache.Set(key, "123"u8);
            return cache.TryGetValue(key, out long _);
        });
    }

    private static ReadOnlySequence<byte> RepeatedSequence(byte[] chunk, long length)
    {
        var first = new Segment(chunk.AsMemory(0, (int)Math.Min(chunk.Length, length)), 0);
        Segment last = first;
        while (last.RunningIndex + last.Memory.Length < length)
        {
            long at = last.RunningIndex + last.Memory.Length;
            last = last.Append(chunk.AsMemory(0, (int)Math.Min(chunk.Length, length - at)), at);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Padded
    {
        public byte Small;
        public long Large;
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        internal Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        internal Segment Append(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            var next = new Segment(memory, runningIndex);
            Next = next;
            return next;
        }
    }

    private sealed class ClockFailedException() : Exception("the clock failed");

    /// <summary>A clock a test sets, forwards or backwards, and can make throw.</summary>
    private sealed class SettableClock(DateTimeOffset start) : TimeProvider
    {
        internal DateTimeOffset Now { get; set; } = start;

        internal bool Throws { get; set; }

        public override DateTimeOffset GetUtcNow() => Throws ? throw new ClockFailedException() : Now;

        public override long GetTimestamp() => Throws ? throw new ClockFailedException() : Now.UtcTicks;

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;
    }
}
