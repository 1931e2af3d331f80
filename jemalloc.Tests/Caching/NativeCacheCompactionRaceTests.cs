using System.Buffers;
using System.Collections.Concurrent;
using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Compaction and in-place updates racing leases, GetOrAdd, Remove, Clear and the expiry sweep (on a fake
/// clock): every value read is whole and its key's, a lease's bytes never change, and the budget and the
/// statistics hold in every sample; then Dispose under an open lease is refused and the lease keeps its bytes.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheCompactionRaceTests : LeakCheckedTest
{
    private const int Keys = 600;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Compaction_racing_leases_get_or_add_remove_clear_and_expiry_never_shows_a_torn_or_moved_value(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = NativeCache.MinimumBudgetBytes * 2,
            ShardCount = 2,
            TimeProvider = time,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        var failures = new ConcurrentQueue<string>();
        const int Workers = 4;
        var threads = new List<Thread>();
        using var start = new Barrier(Workers + 1);
        int running = Workers;
        int compacted = 0;
        for (int t = 0; t < Workers; t++)
        {
            int seed = t;
            var thread = new Thread(() =>
            {
                try
                {
                    start.SignalAndWait(TimeSpan.FromMinutes(1));
                    // One pass compacts here; a machine that interleaves the threads otherwise (Clear
                    // coming between the updates that would have made a segment a quarter dead) gets
                    // more, up to ten, so that the race always includes the compaction it exists for.
                    for (int pass = 0; pass < 10 && (pass == 0 || Volatile.Read(ref compacted) == 0) && failures.IsEmpty; pass++)
                    {
                        Work(cache, seed + (pass * Workers), failures);
                    }
                }
                catch (Exception exception)
                {
                    failures.Enqueue(exception.ToString());
                }
                finally
                {
                    Interlocked.Decrement(ref running);
                }
            });
            threads.Add(thread);
            thread.Start();
        }

        // The clock, the sweep, Clear and the statistics, until the workers are done.
        start.SignalAndWait(TimeSpan.FromMinutes(1));
        int rounds = 0;
        while (Volatile.Read(ref running) > 0 && failures.IsEmpty)
        {
            time.Advance(TimeSpan.FromMilliseconds(700));
            cache.RemoveExpired();
            NativeCacheStatistics sample = cache.GetStatistics();
            if (sample.SegmentsCompacted > 0)
            {
                Volatile.Write(ref compacted, 1);
            }

            if (sample.AllocatedBytes > sample.BudgetBytes || sample.DeadBytes < 0 || sample.DeadBytes > sample.AllocatedBytes || sample.Entries < 0)
            {
                failures.Enqueue($"sample {rounds}: {sample}");
            }

            if (++rounds % 50 == 0)
            {
                cache.Clear();
            }

            Thread.Yield();
        }

        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromMinutes(5)), "a worker did not finish");
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(0, statistics.PinnedBytes);
        Assert.True(statistics.ReplacedInPlace > 0);
        Assert.True(Volatile.Read(ref compacted) == 1 || statistics.SegmentsCompacted > 0, $"no segment compacted: {statistics}");
        Assert.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared);
        long found = 0;
        for (int key = 0; key < Keys; key++)
        {
            if (cache.ContainsKey(CacheTestData.Key(key)))
            {
                found++;
            }
        }

        Assert.Equal(found, cache.Count);

        // Dispose with a lease open is refused and frees nothing: the lease keeps its bytes (the update
        // after it appended), and once it ends the cache goes.
        cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 99, 64));
        Assert.True(cache.TryGet(CacheTestData.Key(1), out NativeCacheLease last));
        cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 100, 32));
        Assert.Throws<InvalidOperationException>(cache.Dispose);
        Assert.True(CacheTestData.IsIntact(last.Span, 1, out long version) && version == 99);
        last.Dispose();
        Assert.False(last.IsOpen);
        bool ended = false;
        try
        {
            _ = last.Span.Length;
        }
        catch (ObjectDisposedException)
        {
            ended = true;
        }

        Assert.True(ended);
        cache.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 101, 32)));
    }

    private static void Work(NativeCache cache, int seed, ConcurrentQueue<string> failures)
    {
        var random = new Random(seed);
        var expiring = new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1) };
        var sliding = new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(2) };
        byte[] buffer = new byte[2100];
        for (int step = 0; step < 15_000 && failures.IsEmpty; step++)
        {
            int key = random.Next(Keys);
            byte[] keyBytes = CacheTestData.Key(key);
            int leasedKey = random.Next(Keys);
            bool open = cache.TryGet(CacheTestData.Key(leasedKey), out NativeCacheLease lease);
            using (lease)
            {
                byte[] before = open ? lease.Span.ToArray() : [];
                if (open && !CacheTestData.IsIntact(before, leasedKey, out _))
                {
                    failures.Enqueue($"key {leasedKey}: a lease opened on a torn value");
                }

                int length = random.Next(3) switch
                {
                    0 => 16,
                    1 => 16 + random.Next(40),
                    _ => 16 + random.Next(2000),
                };
                NativeCacheEntryOptions options = (key % 3) switch { 0 => default, 1 => expiring, _ => sliding };
                switch (random.Next(8))
                {
                    case 0:
                        _ = cache.Remove(keyBytes);
                        break;
                    case 1:
                        using (NativeCacheLease added = cache.GetOrAdd(keyBytes, (key, step, length), static (_, state, writer) =>
                        {
                            byte[] value = CacheTestData.Value(state.key, state.step, state.length);
                            value.CopyTo(writer.GetSpan(value.Length));
                            writer.Advance(value.Length);
                        }, options))
                        {
                            if (!CacheTestData.IsIntact(added.Span, key, out _))
                            {
                                failures.Enqueue($"key {key}: GetOrAdd's lease is torn");
                            }
                        }

                        break;
                    default:
                        cache.Set(keyBytes, CacheTestData.Value(key, step, length), options);
                        break;
                }

                if (cache.TryCopyTo(keyBytes, buffer, out int written) && !CacheTestData.IsIntact(buffer.AsSpan(0, written), key, out _))
                {
                    failures.Enqueue($"key {key}: a copy is torn");
                }

                if (open && !lease.Span.SequenceEqual(before))
                {
                    failures.Enqueue($"key {leasedKey}: a lease's bytes changed while it was open");
                }
            }
        }
    }
}
