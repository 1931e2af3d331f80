using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCachePolicyTests : LeakCheckedTest
{
    [Fact]
    public void A_hot_set_survives_a_one_pass_scan_bigger_than_the_cache()
    {
        const long Budget = 4 << 20;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = Budget, ShardCount = 2 });
        const int Hot = 2000;
        for (int round = 0; round < 3; round++)
        {
            for (int i = 0; i < Hot; i++)
            {
                if (!cache.TryGet(CacheTestData.Key(i), out NativeCacheLease lease))
                {
                    cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 300));
                    continue;
                }

                lease.Dispose();
            }
        }

        // A scan of twice the budget, each key written once and never read.
        for (int i = 0; i < (2 * Budget) / 300; i++)
        {
            cache.Set(CacheTestData.Key(1_000_000 + i), CacheTestData.Value(1_000_000 + i, 1, 300));
        }

        int survivors = 0;
        for (int i = 0; i < Hot; i++)
        {
            survivors += cache.ContainsKey(CacheTestData.Key(i)) ? 1 : 0;
        }

        Assert.True(survivors >= Hot * 9 / 10, $"{survivors} of {Hot} hot entries survived the scan.");
    }

    [Fact]
    public void On_a_zipf_workload_the_hit_ratio_is_clearly_above_a_fifo_of_as_many_entries()
    {
        const long Budget = 2 << 20;
        const int Keys = 100_000;
        const int ValueLength = 100;
        var zipf = new Zipf(Keys, 0.9, seed: 5);
        int[] trace = new int[400_000];
        for (int i = 0; i < trace.Length; i++)
        {
            trace[i] = zipf.Next();
        }

        double cacheRatio;
        long entries;
        using (var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = Budget, ShardCount = 1 }))
        {
            byte[] value = new byte[ValueLength];
            long hits = 0;
            foreach (int key in trace)
            {
                if (cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
                {
                    hits++;
                    lease.Dispose();
                }
                else
                {
                    cache.Set(CacheTestData.Key(key), value);
                }
            }

            cacheRatio = (double)hits / trace.Length;
            entries = cache.GetStatistics().Entries;
        }

        // A FIFO holding as many entries as the cache held at the end: the same memory per entry,
        // so the difference is the policy's.
        var fifo = new Queue<int>();
        var present = new HashSet<int>();
        long fifoHits = 0;
        foreach (int key in trace)
        {
            if (present.Contains(key))
            {
                fifoHits++;
                continue;
            }

            fifo.Enqueue(key);
            present.Add(key);
            if (fifo.Count > entries)
            {
                present.Remove(fifo.Dequeue());
            }
        }

        double fifoRatio = (double)fifoHits / trace.Length;
        Assert.True(cacheRatio > fifoRatio + 0.05, $"Hit ratio {cacheRatio:P1} against a FIFO's {fifoRatio:P1}.");
    }

    [Fact]
    public void A_big_entry_must_earn_its_room()
    {
        // Small entries read again and again, and big ones each read once: the small ones stay.
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1 });
        const int Small = 3000;
        for (int i = 0; i < Small; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 100));
        }

        for (int round = 0; round < 30; round++)
        {
            for (int i = 0; i < Small; i++)
            {
                if (cache.TryGet(CacheTestData.Key(i), out NativeCacheLease lease))
                {
                    lease.Dispose();
                }
                else
                {
                    cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 100));
                }
            }

            for (int j = 0; j < 4; j++)
            {
                long big = 1_000_000 + (round * 4) + j;
                cache.Set(CacheTestData.Key(big), CacheTestData.Value(big, 1, 60_000));
                if (cache.TryGet(CacheTestData.Key(big), out NativeCacheLease lease))
                {
                    lease.Dispose();
                }
            }
        }

        int smallLeft = 0;
        for (int i = 0; i < Small; i++)
        {
            smallLeft += cache.ContainsKey(CacheTestData.Key(i)) ? 1 : 0;
        }

        Assert.True(smallLeft >= Small * 9 / 10, $"{smallLeft} of {Small} small, often read entries are still there.");
    }

    // Zipf-distributed key numbers (rank 0 the most frequent), by inverting the cumulative distribution.
    private sealed class Zipf
    {
        private readonly double[] _cumulative;
        private readonly Random _random;

        internal Zipf(int keys, double exponent, int seed)
        {
            _random = new Random(seed);
            _cumulative = new double[keys];
            double sum = 0;
            for (int i = 0; i < keys; i++)
            {
                sum += 1 / Math.Pow(i + 1, exponent);
                _cumulative[i] = sum;
            }

            for (int i = 0; i < keys; i++)
            {
                _cumulative[i] /= sum;
            }
        }

        internal int Next()
        {
            int index = Array.BinarySearch(_cumulative, _random.NextDouble());
            return index >= 0 ? index : Math.Min(~index, _cumulative.Length - 1);
        }
    }
}
