using System.Buffers;

namespace jemalloc.Tests.Caching;

/// <summary>Writes that leases leave no room for; copies into short destinations; reads of the wrong size.</summary>
public sealed partial class NativeCacheAttackTests
{
    [Fact]
    public void A_write_with_no_room_left_by_open_leases_is_refused_naming_the_leases()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        for (int i = 0; i < 700; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 900));
        }

        // Leases on every tenth entry pin nearly every segment; Clear then leaves them to the leases.
        LeaseEveryTenthAndWrite(cache, 0);
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);
        cache.Set("x", new byte[512 << 10]);
        Assert.Equal(512 << 10, cache.GetBytes("x"u8)!.Length);
    }

    [Fact]
    public void TryCopyTo_a_short_destination_gives_the_length_and_reads_of_the_wrong_size_are_refused()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        cache.Set("k", CacheTestData.Value(3, 1, 100));
        ArgumentException shortDestination = Assert.Throws<ArgumentException>(() => cache.TryCopyTo("k"u8, new byte[99], out _));
        Assert.Contains("100", shortDestination.Message, StringComparison.Ordinal);
        byte[] exact = new byte[100];
        Assert.True(cache.TryCopyTo("k"u8, exact, out int written));
        Assert.Equal(100, written);
        Assert.True(CacheTestData.IsIntact(exact, 3, out _));
        Assert.False(cache.TryCopyTo("missing"u8, [], out written));
        Assert.Equal(0, written);
        Assert.Throws<InvalidOperationException>(() => cache.TryGetValue("k"u8, out long _));
        Assert.True(cache.TryGet("k", out NativeCacheLease lease));
        using (lease)
        {
            bool refused = false;
            try
            {
                _ = lease.Read<Guid>();
            }
            catch (InvalidOperationException)
            {
                refused = true;
            }

            Assert.True(refused);
        }

        Assert.Throws<ArgumentNullException>(() => cache.TryWriteTo("k"u8, null!));
        Assert.Throws<ArgumentNullException>(() => cache.Set((string)null!, "v"u8));
        Assert.Throws<ArgumentNullException>(() => cache.GetOrAdd<int>("k"u8, 0, null!));
    }

    [Fact]
    public void A_value_given_as_a_sequence_of_many_one_byte_segments_is_stored_whole()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        byte[] expected = CacheTestData.Value(9, 4, 5000);
        var first = new ByteSegment(expected.AsMemory(0, 1), 0);
        ByteSegment last = first;
        for (int i = 1; i < expected.Length; i++)
        {
            last = last.Append(expected.AsMemory(i, 1));
        }

        cache.Set("seq"u8, new ReadOnlySequence<byte>(first, 0, last, 1));
        Assert.Equal(expected, cache.GetBytes("seq"u8));
        cache.Set("seq"u8, ReadOnlySequence<byte>.Empty);
        Assert.Equal(0, cache.GetBytes("seq"u8)?.Length);
    }

    [Fact]
    public void Expiries_not_in_the_future_are_refused_and_the_old_value_stays()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        cache.Set("k", "old"u8);
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k", "new"u8, new NativeCacheEntryOptions { AbsoluteExpiration = DateTimeOffset.UtcNow.AddSeconds(-1) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k", "new"u8, new NativeCacheEntryOptions { AbsoluteExpiration = DateTimeOffset.MinValue }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k", "new"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.Zero }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k", "new"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.MinValue }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k", "new"u8, new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromTicks(-1) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.GetOrAdd("n"u8, 0, static (_, _, w) => w.Write("v"u8), new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.Zero }).Dispose());
        Assert.Equal("old"u8.ToArray(), cache.GetBytes("k"u8));
        Assert.False(cache.ContainsKey("n"u8));
        // The far ends of time: a deadline no clock reaches is no expiry problem.
        cache.Set("far", "f"u8, new NativeCacheEntryOptions { AbsoluteExpiration = DateTimeOffset.MaxValue });
        cache.Set("far2", "g"u8, new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.MaxValue, SlidingExpiration = TimeSpan.MaxValue });
        Assert.Equal("f"u8.ToArray(), cache.GetBytes("far"u8));
        Assert.Equal("g"u8.ToArray(), cache.GetBytes("far2"u8));
        cache.RemoveExpired();
        Assert.Equal(3, cache.Count);
    }

    private static void LeaseEveryTenthAndWrite(NativeCache cache, int i)
    {
        if (i == 700)
        {
            cache.Clear();
            cache.Set("x", "small"u8);
            NativeCacheStatistics pinned = cache.GetStatistics();
            Assert.True(pinned.PinnedBytes > 256 << 10, pinned.ToString());
            // Room for it if nothing were pinned; not with half the pinned bytes' worth more.
            int size = (int)(cache.BudgetBytes - (pinned.PinnedBytes / 2));
            InvalidOperationException refused = Assert.Throws<InvalidOperationException>(() => cache.Set("x", new byte[size]));
            Assert.Contains("lease", refused.Message, StringComparison.OrdinalIgnoreCase);
            // Refused before anything was evicted: the key keeps its old value.
            Assert.Equal("small"u8.ToArray(), cache.GetBytes("x"u8));
            Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
            return;
        }

        Assert.True(cache.TryGet(CacheTestData.Key(i), out NativeCacheLease lease), $"key {i} was evicted before its lease");
        using (lease)
        {
            LeaseEveryTenthAndWrite(cache, i + 10);
            Assert.True(CacheTestData.IsIntact(lease.Span, i, out long version) && version == 1);
        }
    }

    private sealed class ByteSegment : ReadOnlySequenceSegment<byte>
    {
        internal ByteSegment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        internal ByteSegment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new ByteSegment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
