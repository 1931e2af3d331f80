using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheClearTests : LeakCheckedTest
{
    [Fact]
    public void Clear_without_leases_frees_everything_at_once()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ShardCount = 4 });
        long liveBefore = AllocationLedger.LiveCount;
        for (int i = 0; i < 3000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 500));
        }

        Assert.True(AllocationLedger.LiveCount > liveBefore);
        cache.Clear();
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(0, statistics.Entries);
        Assert.Equal(0, cache.Count);
        Assert.Equal(3000, statistics.Cleared);
        Assert.Equal(3000, statistics.Writes);
        Assert.Equal(0, statistics.AllocatedBytes);
        Assert.Equal(0, statistics.ArenaAllocatedBytes);
        Assert.Equal(liveBefore, AllocationLedger.LiveCount);
        Assert.Null(cache.GetBytes(CacheTestData.Key(5)));

        // The cache goes on in its new generation.
        cache.Set(CacheTestData.Key(5), CacheTestData.Value(5, 2, 500));
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(5)), 5, out long version) && version == 2);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Clear_with_a_lease_open_keeps_its_bytes_and_the_last_lease_frees_the_old_arena(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, ShardCount = 2 });
        long liveBefore = AllocationLedger.LiveCount;
        for (int i = 0; i < 3000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 500));
        }

        Assert.True(cache.TryGet(CacheTestData.Key(17), out NativeCacheLease lease));
        NativeCacheLease copy = lease;
        long full = cache.GetStatistics().AllocatedBytes;
        cache.Clear();
        NativeCacheStatistics cleared = cache.GetStatistics();
        Assert.Equal(0, cleared.Entries);
        // Only the leased segment is still held, and counted as pinned.
        Assert.True(cleared.PinnedBytes > 0);
        Assert.Equal(cleared.PinnedBytes, cleared.AllocatedBytes);
        Assert.True(cleared.AllocatedBytes < full / 4);

        for (int i = 0; i < 3000; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 2, 500));
        }

        Assert.True(CacheTestData.IsIntact(lease.Span, 17, out long version) && version == 1);
        Assert.Throws<InvalidOperationException>(cache.Dispose);
        copy.Dispose();
        Assert.False(lease.IsOpen);
        // In checked mode freed blocks wait in the quarantine, still allocated in jemalloc's books.
        AllocationLedger.FlushQuarantine();
        NativeCacheStatistics after = cache.GetStatistics();
        Assert.Equal(0, after.PinnedBytes);
        Assert.Equal(after.AllocatedBytes, after.ArenaAllocatedBytes);
        cache.Clear();
        AllocationLedger.FlushQuarantine();
        Assert.Equal(liveBefore, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Operations_racing_Clear_land_in_one_generation_or_the_other()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 4 });
        long[] versions = new long[500];
        using var stop = new CancellationTokenSource();
        var failures = new List<string>();
        var workers = new Thread[2];
        for (int t = 0; t < workers.Length; t++)
        {
            int seed = t;
            workers[t] = new Thread(() =>
            {
                var random = new Random(seed);
                while (!stop.IsCancellationRequested)
                {
                    int key = random.Next(versions.Length);
                    try
                    {
                        if (random.Next(2) == 0)
                        {
                            long version = Interlocked.Increment(ref versions[key]);
                            cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, version, 16 + random.Next(600)));
                        }
                        else if (cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
                        {
                            using (lease)
                            {
                                if (!CacheTestData.IsIntact(lease.Span, key, out long version) || version > Volatile.Read(ref versions[key]))
                                {
                                    lock (failures)
                                    {
                                        failures.Add($"key {key}: version {version}");
                                    }
                                }
                            }
                        }
                    }
                    catch (Exception e)
                    {
                        lock (failures)
                        {
                            failures.Add(e.ToString());
                        }
                    }
                }
            });
            workers[t].Start();
        }

        for (int i = 0; i < 200; i++)
        {
            cache.Clear();
            Thread.Sleep(1);
        }

        stop.Cancel();
        foreach (Thread worker in workers)
        {
            worker.Join();
        }

        Assert.Empty(failures);
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(0, statistics.PinnedBytes);
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);
        Assert.True(statistics.Cleared > 0);
    }
}
