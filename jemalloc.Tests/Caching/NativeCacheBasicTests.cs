using System.Buffers;
using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheBasicTests : LeakCheckedTest
{
    private const long Budget = 16 << 20;

    [Fact]
    public void The_usage_example_of_the_docs_runs()
    {
        byte[] payload = CacheTestData.Value(7, 1, 64);
        string user = string.Empty;
        #region example: cache-usage
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 64L << 20 });

        cache.Set("user:42", "{\"name\":\"Ada\"}"u8);
        cache.Set("session:7"u8, payload, new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(20) });

        if (cache.TryGet("user:42", out NativeCacheLease lease))
        {
            using (lease)
            {
                user = Encoding.UTF8.GetString(lease.Span);   // the value in place: valid until the lease ends
            }
        }

        // One factory call per missing key, however many threads ask at once.
        using NativeCacheLease report = cache.GetOrAdd("report:2026"u8, 2026,
            static (key, year, writer) => writer.Write(Encoding.UTF8.GetBytes($"report {year}")));

        NativeCacheStatistics statistics = cache.GetStatistics();   // hits, misses, evictions, bytes, ...
        #endregion

        Assert.Equal("{\"name\":\"Ada\"}", user);
        Assert.Equal("report 2026", Encoding.UTF8.GetString(report.Span));
        Assert.Equal(3, statistics.Entries);
        Assert.True(cache.ContainsKey("session:7"u8));
    }

    [Fact]
    public void A_value_written_under_a_byte_key_is_read_back_through_every_read()
    {
        using var cache = new NativeCache(Budget);
        byte[] value = CacheTestData.Value(1, 1, 300);
        cache.Set("k1"u8, value);

        Assert.True(cache.TryGet("k1"u8, out NativeCacheLease lease));
        using (lease)
        {
            Assert.True(lease.IsOpen);
            Assert.Equal(300, lease.Length);
            Assert.True(lease.Span.SequenceEqual(value));
        }

        byte[] copy = new byte[400];
        Assert.True(cache.TryCopyTo("k1"u8, copy, out int written));
        Assert.Equal(300, written);
        Assert.True(copy.AsSpan(0, 300).SequenceEqual(value));
        Assert.Equal(value, cache.GetBytes("k1"u8));
        var writer = new ArrayBufferWriter<byte>();
        Assert.True(cache.TryWriteTo("k1"u8, writer));
        Assert.True(writer.WrittenSpan.SequenceEqual(value));
        Assert.True(cache.ContainsKey("k1"u8));
        Assert.Equal(1, cache.Count);
    }

    [Fact]
    public void A_missing_key_is_a_miss_everywhere()
    {
        using var cache = new NativeCache(Budget);
        Assert.False(cache.TryGet("none"u8, out NativeCacheLease lease));
        Assert.False(lease.IsOpen);
        Assert.Equal(0, lease.Length);
        Assert.True(lease.Span.IsEmpty);
        lease.Dispose();
        Assert.False(cache.TryCopyTo("none"u8, new byte[4], out int written));
        Assert.Equal(0, written);
        Assert.Null(cache.GetBytes("none"u8));
        Assert.False(cache.TryWriteTo("none"u8, new ArrayBufferWriter<byte>()));
        Assert.False(cache.ContainsKey("none"u8));
        Assert.False(cache.Remove("none"u8));
        Assert.False(cache.Refresh("none"u8));
        Assert.False(cache.TryGetValue("none"u8, out long _));
    }

    [Fact]
    public void String_and_struct_keys_are_their_bytes()
    {
        using var cache = new NativeCache(Budget);
        cache.Set("héllo", [1, 2, 3]);
        Assert.Equal([1, 2, 3], cache.GetBytes(Encoding.UTF8.GetBytes("héllo")));
        Assert.True(cache.TryGet("héllo", out NativeCacheLease lease));
        lease.Dispose();

        cache.Set(42L, [4, 5]);
        Assert.Equal([4, 5], cache.GetBytes(BitConverter.GetBytes(42L)));
        Assert.True(cache.TryGet(42L, out lease));
        lease.Dispose();

        Guid id = Guid.NewGuid();
        cache.SetValue(id, 3.5);
        Assert.True(cache.TryGetValue(id, out double number));
        Assert.Equal(3.5, number);
        cache.SetValue("v"u8, 77);
        Assert.True(cache.TryGetValue("v"u8, out int seventySeven));
        Assert.Equal(77, seventySeven);
        Assert.True(cache.TryGet(id, out lease));
        using (lease)
        {
            Assert.Equal(3.5, lease.Read<double>());
            Assert.Throws<InvalidOperationException>(() => ReadAsInt(cache, id));
        }

        Assert.True(cache.Remove(42L));
        Assert.True(cache.Remove("héllo"));
        Assert.False(cache.Remove("héllo"));
        Assert.Equal(2, cache.Count);
    }

    private static int ReadAsInt(NativeCache cache, Guid id)
    {
        Assert.True(cache.TryGet(id, out NativeCacheLease lease));
        using (lease)
        {
            return lease.Read<int>();
        }
    }

    [Fact]
    public void A_value_of_the_wrong_size_for_its_type_is_refused()
    {
        using var cache = new NativeCache(Budget);
        cache.Set("k"u8, [1, 2, 3]);
        Assert.Throws<InvalidOperationException>(() => cache.TryGetValue("k"u8, out long _));
        var error = Assert.Throws<ArgumentException>(() => cache.TryCopyTo("k"u8, new byte[2], out _));
        Assert.Contains("3", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Empty_keys_and_values_and_keys_of_the_longest_length_are_entries()
    {
        using var cache = new NativeCache(Budget);
        cache.Set(ReadOnlySpan<byte>.Empty, ReadOnlySpan<byte>.Empty);
        Assert.True(cache.TryGet(ReadOnlySpan<byte>.Empty, out NativeCacheLease lease));
        using (lease)
        {
            Assert.Equal(0, lease.Length);
        }

        byte[] longest = new byte[NativeCache.MaxKeyLength];
        Random.Shared.NextBytes(longest);
        cache.Set(longest, [9]);
        Assert.Equal([9], cache.GetBytes(longest));
        longest[^1] ^= 1;
        Assert.Null(cache.GetBytes(longest));
        Assert.Equal(2, cache.Count);
    }

    [Fact]
    public void A_key_longer_than_the_limit_is_refused_by_every_member()
    {
        using var cache = new NativeCache(Budget);
        byte[] tooLong = new byte[NativeCache.MaxKeyLength + 1];
        Assert.Throws<ArgumentException>(() => cache.Set(tooLong, [1]));
        Assert.Throws<ArgumentException>(() => cache.TryGet(tooLong, out _));
        Assert.Throws<ArgumentException>(() => cache.Remove(tooLong));
        Assert.Throws<ArgumentException>(() => cache.ContainsKey(tooLong));
        Assert.Throws<ArgumentException>(() => cache.Refresh(tooLong));
        Assert.Throws<ArgumentException>(() => cache.TryCopyTo(tooLong, new byte[1], out _));
        Assert.Throws<ArgumentException>(() => cache.Set(new string('x', NativeCache.MaxKeyLength + 1), [1]));
        Assert.Throws<ArgumentException>(() => cache.Set(new string('é', (NativeCache.MaxKeyLength / 2) + 1), [1]));
        Assert.Throws<ArgumentNullException>(() => cache.Set((string)null!, [1]));
        Assert.Throws<ArgumentNullException>(() => cache.TryGet((string)null!, out _));
        Assert.Throws<ArgumentNullException>(() => cache.TryWriteTo("k"u8, null!));
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void A_write_replaces_the_value_and_counts_as_a_replacement()
    {
        using var cache = new NativeCache(Budget);
        cache.Set("k"u8, [1]);
        cache.Set("k"u8, [2, 2]);
        Assert.Equal([2, 2], cache.GetBytes("k"u8));
        Assert.Equal(1, cache.Count);
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(2, statistics.Writes);
        Assert.Equal(1, statistics.Replaced);
        Assert.Equal(1, statistics.Entries);
        Assert.Equal(2, statistics.KeyValueBytes - 1);
    }

    [Fact]
    public void A_value_from_a_sequence_of_segments_is_stored_whole()
    {
        using var cache = new NativeCache(Budget);
        byte[] value = CacheTestData.Value(5, 1, 1000);
        var sequence = new ReadOnlySequence<byte>(value);
        cache.Set("seq"u8, sequence);
        Assert.Equal(value, cache.GetBytes("seq"u8));
    }

    [Fact]
    public void Values_bigger_than_a_segment_get_a_segment_of_their_own()
    {
        using var cache = new NativeCache(Budget);
        byte[] big = CacheTestData.Value(7, 1, 3 << 20);
        cache.Set("big"u8, big);
        cache.Set("small"u8, [1]);
        Assert.Equal(big, cache.GetBytes("big"u8));
        cache.Set("big"u8, CacheTestData.Value(7, 2, 2 << 20));
        Assert.True(CacheTestData.IsIntact(cache.GetBytes("big"u8), 7, out long version));
        Assert.Equal(2, version);
        Assert.True(cache.GetStatistics().AllocatedBytes <= Budget);
    }

    [Fact]
    public void A_value_bigger_than_the_budget_is_an_argument_exception_and_changes_nothing()
    {
        using var cache = new NativeCache(Budget);
        cache.Set("k"u8, [1]);
        byte[] huge = new byte[Budget];
        var error = Assert.Throws<ArgumentException>(() => cache.Set("k"u8, huge));
        Assert.Contains("budget", error.Message, StringComparison.Ordinal);
        Assert.Equal([1], cache.GetBytes("k"u8));
    }

    [Fact]
    public void Writing_far_more_than_the_budget_evicts_and_never_passes_it()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 2 });
        var random = new Random(3);
        long written = 0;
        for (int i = 0; written < 40L << 20; i++)
        {
            int length = random.Next(16, 3000);
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, length));
            written += length;
            NativeCacheStatistics running = cache.GetStatistics();
            Assert.True(running.AllocatedBytes <= running.BudgetBytes, $"{running.AllocatedBytes:N0} held past the budget of {running.BudgetBytes:N0}.");
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.EvictedForCapacity > 0);
        Assert.True(statistics.Entries > 100);
        Assert.Equal(statistics.Entries, cache.Count);
        Assert.Equal(statistics.AllocatedBytes, statistics.ArenaAllocatedBytes);
        Assert.True(statistics.OverheadBytesPerEntry > 0);
    }

    [Fact]
    public void Every_entry_read_after_heavy_eviction_is_the_value_written_for_its_key()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1 });
        var random = new Random(11);
        long[] versions = new long[5000];
        for (int step = 0; step < 60_000; step++)
        {
            int key = random.Next(versions.Length);
            if (random.Next(3) == 0)
            {
                versions[key]++;
                cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, versions[key], random.Next(16, 2000)));
            }
            else if (cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
            {
                using (lease)
                {
                    Assert.True(CacheTestData.IsIntact(lease.Span, key, out long version));
                    Assert.Equal(versions[key], version);
                }
            }
            else if (random.Next(50) == 0)
            {
                _ = cache.Remove(CacheTestData.Key(key));
            }
        }
    }
}
