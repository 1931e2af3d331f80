using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// The budget holds entries, not empty room: when a write needs a new head and the reclaim that makes
/// room copies entries forward into a new head of the same log, the write fills that head rather than
/// leaving it nearly empty in its log.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheSegmentFillTests : LeakCheckedTest
{
    // 16-byte header, 8-byte key, padding: what an entry costs by construction, with the index and
    // ghost table (8 and 2 bytes a slot at a load from 3/8 to 3/4) about 40 bytes above its key and value.
    private const double OverheadBound = 60;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Skewed_reads_and_writes_keep_the_overhead_per_entry_near_its_fixed_cost(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 16 << 20, ShardCount = 2, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        const int Keys = 60_000;
        var random = new Random(36);
        int[] lengths = [.. Enumerable.Range(0, Keys).Select(_ => 50 + random.Next(1_450))];
        for (int key = 0; key < Keys; key++)
        {
            cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, 1, lengths[key]));
        }

        NativeCacheStatistics filled = cache.GetStatistics();
        Assert.InRange(filled.OverheadBytesPerEntry, 16, OverheadBound);

        // A hot set read often (hits earn entries a copy forward when their segment is reclaimed) and
        // written now and then; a miss writes, as a cache-aside reader does.
        for (int op = 0; op < 200_000; op++)
        {
            int key = (int)(Keys * Math.Pow(random.NextDouble(), 3));
            if (op % 4 == 0)
            {
                cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, 2, lengths[key]));
            }
            else if (cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
            {
                using (lease)
                {
                    Assert.True(CacheTestData.IsIntact(lease.Span, key, out _));
                }
            }
            else
            {
                cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, 3, lengths[key]));
            }
        }

        NativeCacheStatistics used = cache.GetStatistics();
        Assert.True(used.EvictedForCapacity > Keys / 2, $"{used.EvictedForCapacity} evictions: the workload must have reclaimed segments");
        Assert.True(used.OverheadBytesPerEntry <= OverheadBound,
            $"{used.OverheadBytesPerEntry:F1} bytes per entry above key and value ({used.Entries:N0} entries, {used.KeyValueBytes:N0} of {used.AllocatedBytes:N0} bytes, {used.DeadBytes:N0} dead)");
        Assert.InRange(used.AllocatedBytes, used.BudgetBytes * 9 / 10, used.BudgetBytes);
    }
}
