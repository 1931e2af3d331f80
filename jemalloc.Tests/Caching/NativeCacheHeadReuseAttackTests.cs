using System.Buffers;
using System.Collections.Concurrent;
using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Attacks on a write that, after the reclaim making room copied entries into a new head of its log,
/// fills that head and gives back the segment it obtained: numbering, budget, leaks and values under
/// long churn, expiry, big entries, open leases and racing threads, in checked mode and without.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheHeadReuseAttackTests : LeakCheckedTest
{
    private readonly FakeTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));

    // Segment numbers are 16 bits: a write that leaked one each time it gave back its segment would run
    // out after about 65,000 give-backs; the cache then goes on, but a reclaim can no longer number a
    // new head for the entries it copies forward and evicts them (and compaction scans every number).
    // Skewed reads earn entries a copy forward at every reclaim, so the write that made room finds the
    // copies' head and gives its segment back.
    // With every entry in one TTL log (an hour, the clock stopped) each reclaim is of the log being
    // written, the case the give-back is for; values change size so replacements also leave dead bytes.
    [Theory]
    [InlineData(false, 1, true)]
    [InlineData(false, 1, false)]
    [InlineData(true, 1, true)]
    [InlineData(false, 16, true)]
    public void Long_churn_at_the_smallest_budget_never_runs_out_of_segment_numbers_nor_passes_the_budget(bool checkedMode, int shards, bool oneTtlLog)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = NativeCache.MinimumBudgetBytes,
            ShardCount = shards,
            TimeProvider = _clock,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        NativeCacheEntryOptions options = oneTtlLog ? new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromHours(1) } : default;
        const int Keys = 6_000;
        const int Versions = 4;

        // Only the one-shard TTL run gives back well over 65,535 segments (about 140,000); the values
        // are made once, and a read compared with them whole, so the churn costs little more than the cache.
        int steps = checkedMode ? 400_000 : shards == 1 && oneTtlLog ? 3_000_000 : 500_000;
        byte[][] values = new byte[Keys * Versions][];
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = CacheTestData.Value(i / Versions, i % Versions, 16 + (i * 131 % 2_400));
        }

        var random = new Random(12);
        long[] reads = new long[10];
        long[] hits = new long[10];
        for (int step = 0; step < steps; step++)
        {
            int key = NextKey(random, Keys);
            bool read = step % 3 != 0;
            bool hit = read && Matches(cache, key, values, Versions, step);
            int window = step * 10 / steps;
            reads[window] += read ? 1 : 0;
            hits[window] += hit ? 1 : 0;
            if (!hit)
            {
                cache.Set(CacheTestData.Key(key), values[(key * Versions) + (step % Versions)], options);
            }

            if ((step & 0xFFFF) == 0)
            {
                CheckAtRest(cache, checkedMode);
            }
        }

        NativeCacheStatistics statistics = CheckAtRest(cache, checkedMode);
        Assert.True(statistics.EvictedForCapacity > steps / 10, $"{statistics.EvictedForCapacity:N0} evictions");

        // The budget still holds entries: a segment a give-back lost would stay counted in it while
        // holding nothing (the cache shrinking to a few entries), and numbers run out would make
        // reclaims evict what they should have copied forward. The workload does not change, so
        // neither does its hit ratio: the last tenths against the second to fourth (the first warms).
        Assert.True(statistics.KeyValueBytes > statistics.BudgetBytes / 2, $"{statistics.KeyValueBytes:N0} bytes of keys and values in a {statistics.BudgetBytes:N0}-byte budget");
        double early = Enumerable.Range(1, 3).Average(w => (double)hits[w] / reads[w]);
        double late = Enumerable.Range(6, 4).Min(w => (double)hits[w] / reads[w]);
        Assert.True(late > early * 0.955, $"the hit ratio fell from {early:P1} to {late:P1}: per tenth {string.Join(", ", Enumerable.Range(0, 10).Select(w => ((double)hits[w] / reads[w]).ToString("P1", System.Globalization.CultureInfo.InvariantCulture)))}");
    }

    // A hit must be one of the key's values, whole.
    private static bool Matches(NativeCache cache, int key, byte[][] values, int versions, int step)
    {
        if (!cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
        {
            return false;
        }

        using (lease)
        {
            ReadOnlySpan<byte> value = lease.Span;
            long version = value.Length >= 16 ? BitConverter.ToInt64(value[8..]) : -1;
            Assert.True(
                value.Length >= 16 && BitConverter.ToInt64(value) == key && version >= 0 && version < versions && value.SequenceEqual(values[(key * versions) + (int)version]),
                $"key {key}: a torn or foreign value of {value.Length} bytes at step {step}");
        }

        return true;
    }

    // The TTL logs (one per power of two of seconds) take the same head logic; entries in several of
    // them, and in the FIFO logs, with the clock moving so that sweeps reclaim while writes do.
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Churn_across_the_TTL_logs_keeps_values_deadlines_and_the_budget(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = NativeCache.MinimumBudgetBytes,
            ShardCount = 2,
            TimeProvider = _clock,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        const int Keys = 4_000;
        var deadlines = new DateTimeOffset?[Keys];
        var random = new Random(7);
        int steps = checkedMode ? 300_000 : 800_000;
        for (int step = 0; step < steps; step++)
        {
            int key = (int)(Keys * Math.Pow(random.NextDouble(), 3));
            if (step % 3 == 0 || !Read(cache, key, deadlines, step))
            {
                // A key's TTL class is fixed (1 to 64 s), a fifth of the keys never expire.
                int ttlClass = key % 5;
                NativeCacheEntryOptions options = ttlClass == 0 ? default : new NativeCacheEntryOptions
                {
                    AbsoluteExpirationRelativeToNow = TimeSpan.FromMilliseconds(1_000 << (2 * ttlClass - 2)) + TimeSpan.FromMilliseconds(key % 997),
                };
                cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, step, 16 + (key * 37 % 600)), options);
                deadlines[key] = ttlClass == 0 ? null : _clock.GetUtcNow() + options.AbsoluteExpirationRelativeToNow!.Value;
            }

            if (step % 500 == 0)
            {
                _clock.Advance(TimeSpan.FromMilliseconds(250));
            }

            if (step % 20_000 == 0)
            {
                cache.RemoveExpired();
                CheckAtRest(cache, checkedMode);
            }
        }

        NativeCacheStatistics statistics = CheckAtRest(cache, checkedMode);
        Assert.True(statistics.Expired > 0 && statistics.EvictedForCapacity > 0, statistics.ToString());
    }

    // Big entries (their own segments) between small ones, with leases held across later writes: a
    // leased entry must keep its bytes whatever the writes after it reclaim, and the segment a write
    // gives back must never be one a lease reads.
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Big_entries_and_leases_held_across_writes_keep_their_bytes(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = 2 << 20,
            ShardCount = 1,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        const int Keys = 3_000;
        var random = new Random(3);
        for (int step = 0; step < 200_000; step++)
        {
            int key = NextKey(random, Keys);
            if (step % 3 == 0 || !cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
            {
                cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, step, BigOrSmall(key)));
                continue;
            }

            using (lease)
            {
                Assert.True(CacheTestData.IsIntact(lease.Span, key, out _), $"key {key}: a torn or foreign value at step {step}");
                if (step % 50 == 1)
                {
                    // Held across writes that reclaim: enough bytes to go round the budget.
                    byte[] copy = lease.Span.ToArray();
                    for (int write = 0; write < 200; write++)
                    {
                        int other = NextKey(random, Keys);
                        cache.Set(CacheTestData.Key(other), CacheTestData.Value(other, step, BigOrSmall(other)));
                    }

                    Assert.True(copy.AsSpan().SequenceEqual(lease.Span), $"key {key}: a leased value changed under later writes at step {step}");
                }
            }

            if (step % 10_000 == 0)
            {
                NativeCacheStatistics sample = cache.GetStatistics();
                Assert.InRange(sample.AllocatedBytes, 0, sample.BudgetBytes);
            }
        }

        NativeCacheStatistics statistics = CheckAtRest(cache, checkedMode);
        Assert.Equal(0, statistics.PinnedBytes);
    }

    // Threads writing skewed keys (reclaims copy forward) with leases held across their own writes,
    // one removing, adding through GetOrAdd, clearing, moving the clock and sweeping; then Dispose races
    // them. Every value read is the value written for its key, and nothing leaks.
    [Theory]
    [InlineData(false, 1)]
    [InlineData(true, 1)]
    [InlineData(false, 4)]
    [InlineData(true, 4)]
    public void Writers_with_held_leases_racing_Remove_GetOrAdd_Clear_expiry_and_Dispose_read_only_their_values(bool checkedMode, int shards)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = NativeCache.MinimumBudgetBytes,
            ShardCount = shards,
            TimeProvider = _clock,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        const int Keys = 2_000;
        var failures = new ConcurrentQueue<string>();
        int writesBeforeDispose = checkedMode ? 30_000 : 80_000;
        long writes = 0;
        var threads = new List<Thread>();
        for (int t = 0; t < 3; t++)
        {
            int seed = t;
            threads.Add(new Thread(() => Writer(cache, seed, Keys, failures, ref writes)));
        }

        threads.Add(new Thread(() => Disturber(cache, Keys, failures)));
        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        while (Volatile.Read(ref writes) < writesBeforeDispose && threads.Exists(t => t.IsAlive))
        {
            Thread.Sleep(5);
        }

        while (true)
        {
            try
            {
                cache.Dispose();
                break;
            }
            catch (InvalidOperationException)
            {
                // Refused while a lease is open: the workers close theirs soon.
                Thread.Yield();
            }
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));
        Assert.True(Volatile.Read(ref writes) >= writesBeforeDispose, $"{writes:N0} writes before Dispose");
        Assert.Throws<ObjectDisposedException>(() => cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 1, 64)));
    }

    private static void Writer(NativeCache cache, int seed, int keys, ConcurrentQueue<string> failures, ref long writes)
    {
        var random = new Random(seed);
        try
        {
            for (long step = 0; ; step++)
            {
                int key = NextKey(random, keys);
                if (step % 3 == 0 || !cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
                {
                    WriteOne(cache, seed, step, key);
                    Interlocked.Increment(ref writes);
                    continue;
                }

                using (lease)
                {
                    if (!CacheTestData.IsIntact(lease.Span, key, out _))
                    {
                        failures.Enqueue($"key {key}: a torn or foreign value of {lease.Span.Length} bytes");
                    }

                    if (step % 20 == 1)
                    {
                        // Held across this thread's own writes (and everything the others do meanwhile).
                        byte[] copy = lease.Span.ToArray();
                        for (int write = 0; write < 30; write++)
                        {
                            WriteOne(cache, seed, step, NextKey(random, keys));
                            Interlocked.Increment(ref writes);
                        }

                        if (!copy.AsSpan().SequenceEqual(lease.Span))
                        {
                            failures.Enqueue($"key {key}: a leased value changed under later writes");
                        }
                    }
                }
            }
        }
        catch (ObjectDisposedException)
        {
            // Dispose won: the way out.
        }
        catch (Exception exception)
        {
            failures.Enqueue(exception.ToString());
        }
    }

    // A key's size and TTL are fixed by the key: one in 40 bigger than a segment (8 KiB at 1 MiB and
    // one shard), one in 4 expiring after 1 to 30 s.
    private static void WriteOne(NativeCache cache, int seed, long step, int key)
    {
        int length = key % 40 == 3 ? 9_000 + (key % 7_000) : 16 + (key * 131 % 700);
        NativeCacheEntryOptions options = key % 4 == 1 ? new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1 + key % 30) } : default;
        cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, ((long)seed << 40) | step, length), options);
    }

    // One in 50 keys is big: 20 to 60 KiB against 16 KiB segments (2 MiB, one shard).
    private static int BigOrSmall(int key) => key % 50 == 7 ? 20_000 + (key * 13 % 40_000) : 16 + (key * 131 % 1_200);

    // Skewed: key k is drawn about k^(-2/3) as often as key 0.
    private static int NextKey(Random random, int keys) => (int)(keys * Math.Pow(random.NextDouble(), 3));

    private void Disturber(NativeCache cache, int keys, ConcurrentQueue<string> failures)
    {
        var random = new Random(99);
        try
        {
            for (long step = 0; ; step++)
            {
                int key = random.Next(keys);
                switch (random.Next(100))
                {
                    case < 40:
                        _ = cache.Remove(CacheTestData.Key(key));
                        break;
                    case < 80:
                        using (NativeCacheLease lease = cache.GetOrAdd(CacheTestData.Key(key), key, static (_, k, writer) => writer.Write(CacheTestData.Value(k, -1, 16 + (k * 131 % 700)))))
                        {
                            if (!CacheTestData.IsIntact(lease.Span, key, out _))
                            {
                                failures.Enqueue($"key {key}: GetOrAdd gave a torn or foreign value of {lease.Span.Length} bytes");
                            }
                        }

                        break;
                    case < 95:
                        _clock.Advance(TimeSpan.FromMilliseconds(200));
                        cache.RemoveExpired();
                        break;
                    default:
                        if (random.Next(20) == 0)
                        {
                            cache.Clear();
                        }

                        NativeCacheStatistics sample = cache.GetStatistics();
                        if (sample.AllocatedBytes > sample.BudgetBytes || sample.PinnedBytes > sample.AllocatedBytes)
                        {
                            failures.Enqueue($"bad sample: {sample}");
                        }

                        break;
                }
            }
        }
        catch (ObjectDisposedException)
        {
            // Dispose won: the way out.
        }
        catch (Exception exception)
        {
            failures.Enqueue(exception.ToString());
        }
    }

    // A key just read must hold the value last written and must not have outlived its deadline.
    private bool Read(NativeCache cache, int key, DateTimeOffset?[] deadlines, int step)
    {
        if (!cache.TryGet(CacheTestData.Key(key), out NativeCacheLease lease))
        {
            return false;
        }

        using (lease)
        {
            Assert.True(CacheTestData.IsIntact(lease.Span, key, out _), $"key {key}: a torn or foreign value at step {step}");
            Assert.True(deadlines[key] is not { } deadline || deadline > _clock.GetUtcNow(), $"key {key}: read after its deadline at step {step}");
        }

        return true;
    }

    // With no write running: within the budget, and (outside checked mode, whose quarantine holds freed
    // blocks a while) what the cache counts is what jemalloc reports in its arenas.
    private static NativeCacheStatistics CheckAtRest(NativeCache cache, bool checkedMode)
    {
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.InRange(statistics.AllocatedBytes, 0, statistics.BudgetBytes);
        if (!checkedMode)
        {
            Assert.Equal(statistics.AllocatedBytes, statistics.ArenaAllocatedBytes);
        }

        Assert.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared);
        return statistics;
    }
}
