using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Every index slot carries where its entry's value ends (the lines a lookup fetches with the header): it
/// must follow the entry through appends, replacements in place by shorter and longer values, moves by
/// compaction, expiry and removal, and saturate for values too long to count.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheReachHintTests : LeakCheckedTest
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Every_slot_says_where_its_value_ends_through_writes_in_place_moves_and_removals(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        // A small budget, so that appends evict and compaction moves entries; lengths that cross lines.
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 2, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        var random = new Random(7);
        byte[] value = new byte[3000];
        for (int i = 0; i < 40_000; i++)
        {
            long key = random.Next(2_000);
            int length = random.Next(6) switch
            {
                0 => 0,
                1 => random.Next(1, 64),
                2 => random.Next(64, 200),
                _ => random.Next(200, value.Length),
            };
            value.AsSpan(0, length).Fill((byte)key);
            if (random.Next(20) == 0)
            {
                _ = cache.Remove(key);
            }
            else
            {
                cache.Set(key, value.AsSpan(0, length));
            }

            // Reads count hits, and entries read move forward when their segment is reclaimed.
            long probe = random.Next(2_000);
            if (cache.TryGet(probe, out NativeCacheLease lease))
            {
                using (lease)
                {
                    Assert.True(lease.Span.IndexOfAnyExcept((byte)probe) < 0, $"Key {probe} read another key's bytes.");
                }
            }

            if (i % 5_000 == 0)
            {
                Assert.Equal(0, cache.StaleReachHints());
            }
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.ReplacedInPlace > 0, "No value was replaced in place: the test did not cover it.");
        Assert.True(statistics.EvictedForCapacity > 0, "Nothing was evicted: the test did not cover making room.");
        Assert.True(statistics.SegmentsCompacted > 0, "No segment was compacted: the test did not cover moved entries.");
        Assert.Equal(0, cache.StaleReachHints());
    }

    [Fact]
    public void A_value_too_long_to_count_saturates_its_hint_and_reads_whole()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 16 << 20, ShardCount = 1 });
        byte[] big = new byte[1 << 20];
        new Random(3).NextBytes(big);
        cache.Set("big"u8, big);
        cache.Set("small"u8, big.AsSpan(0, 100));
        Assert.Equal(0, cache.StaleReachHints());
        Assert.True(cache.TryGet("big"u8, out NativeCacheLease lease));
        using (lease)
        {
            Assert.True(lease.Span.SequenceEqual(big));
        }

        // Shorter in place, then longer again: the hint follows the value's end each time.
        cache.Set("big"u8, big.AsSpan(0, (1 << 20) - 70_000));
        Assert.Equal(0, cache.StaleReachHints());
        cache.Set("big"u8, big);
        Assert.Equal(0, cache.StaleReachHints());
    }
}
