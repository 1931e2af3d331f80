using jemalloc.Caching;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>Writes that must evict in other shards while those shards' locks are held by other threads.</summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheContentionTests : LeakCheckedTest
{
    [Fact]
    public void A_write_that_needs_another_shards_room_waits_for_its_lock_rather_than_failing()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 2 });
        (List<long> full, long other) = KeysOfTwoShards(cache);
        CacheShard fullShard = cache.ShardOfKey(CacheTestData.Key(full[0]));
        // The whole budget goes to one shard; the other holds nothing, not even its tables.
        foreach (long key in full)
        {
            cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, 1, 1000));
        }

        using var held = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var holder = new Thread(() =>
        {
            lock (fullShard.Gate)
            {
                held.Set();
                release.Wait();
            }
        });
        holder.Start();
        held.Wait();
        Exception? failure = null;
        var writer = new Thread(() =>
        {
            try
            {
                cache.Set(CacheTestData.Key(other), CacheTestData.Value(other, 1, 1000));
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        writer.Start();
        // Longer than the write's tries of the held lock take (some 30 ms), so it must wait to succeed.
        Thread.Sleep(500);
        release.Set();
        holder.Join();
        writer.Join();

        Assert.Null(failure);
        Assert.True(cache.TryGet(CacheTestData.Key(other), out NativeCacheLease lease));
        using (lease)
        {
            Assert.True(CacheTestData.IsIntact(lease.Span, other, out long version));
            Assert.Equal(1, version);
        }

        Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
    }

    [Fact]
    public void Writers_in_every_shard_of_a_full_cache_never_fail_while_no_lease_is_open()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 4 });
        var failures = new List<Exception>();
        var threads = new Thread[4];
        for (int t = 0; t < threads.Length; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var random = new Random(seed);
                try
                {
                    for (int step = 0; step < 20_000; step++)
                    {
                        long key = random.Next(5000);
                        // Sizes from small to a quarter of a shard's share, so writes often need other shards' room.
                        int length = random.Next(20) == 0 ? 40_000 + random.Next(20_000) : 16 + random.Next(3000);
                        cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, step, length));
                    }
                }
                catch (Exception e)
                {
                    lock (failures)
                    {
                        failures.Add(e);
                    }
                }
            });
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.Empty(failures);
    }

    // Keys that fill one shard past the whole budget, and one key of the other shard.
    private static (List<long> Full, long Other) KeysOfTwoShards(NativeCache cache)
    {
        CacheShard first = cache.ShardOfKey(CacheTestData.Key(0));
        var full = new List<long>();
        long other = -1;
        for (long key = 0; full.Count < 2000 || other < 0; key++)
        {
            if (cache.ShardOfKey(CacheTestData.Key(key)) == first)
            {
                if (full.Count < 2000)
                {
                    full.Add(key);
                }
            }
            else if (other < 0)
            {
                other = key;
            }
        }

        return (full, other);
    }
}
