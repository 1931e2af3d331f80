using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheAllocationTests : LeakCheckedTest
{
    [Fact]
    public void Hits_and_sets_allocate_no_managed_memory()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 2, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        byte[] value = new byte[200];
        byte[][] keys = new byte[20_000][];
        string[] names = new string[keys.Length];
        for (int i = 0; i < keys.Length; i++)
        {
            keys[i] = CacheTestData.Key(i);
            names[i] = "key:" + i;
        }

        // Warm up until the cache is full and evicting, so its per-shard queues and tables have grown.
        for (int round = 0; round < 3; round++)
        {
            RunOnce(cache, keys, names, value);
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        RunOnce(cache, keys, names, value);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.True(cache.GetStatistics().EvictedForCapacity > 0);
    }

    private static void RunOnce(NativeCache cache, byte[][] keys, string[] names, byte[] value)
    {
        for (int i = 0; i < keys.Length; i++)
        {
            cache.Set(keys[i], value);
            cache.Set(names[i], value);
            if (cache.TryGet(keys[i], out NativeCacheLease lease))
            {
                lease.Dispose();
            }

            if (cache.TryGet(names[i], out lease))
            {
                lease.Dispose();
            }

            cache.SetValue(i, (long)i);
            _ = cache.TryGetValue(i, out long _);
        }
    }
}
