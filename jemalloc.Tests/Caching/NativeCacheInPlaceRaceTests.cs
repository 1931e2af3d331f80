using System.Collections.Concurrent;
using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

/// <summary>
/// In-place updates and compaction under many threads: leases held across updates of their own key and
/// of neighbours keep their bytes, every read matches the writer's model, and afterwards the segment walk
/// (statistics, RemoveExpired, Clear) finds exactly the entries the model says are there.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheInPlaceRaceTests : LeakCheckedTest
{
    private const int Threads = 4;
    private const int KeysPerThread = 150;
    private const int Steps = 20_000;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Leases_across_in_place_updates_and_compaction_keep_their_bytes_and_reads_match_the_model(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = NativeCache.MinimumBudgetBytes * 2,
            ShardCount = 2,
            TimeProvider = time,
            ExpirationScanInterval = Timeout.InfiniteTimeSpan,
        });
        var failures = new ConcurrentQueue<string>();
        // Per thread, the last version written of each of its keys (0: removed or never written).
        var models = new long[Threads][];
        var lengths = new int[Threads][];
        var threads = new Thread[Threads];
        using var start = new Barrier(Threads);
        for (int t = 0; t < Threads; t++)
        {
            int owner = t;
            models[owner] = new long[KeysPerThread];
            lengths[owner] = new int[KeysPerThread];
            threads[t] = new Thread(() => Run(cache, owner, models[owner], lengths[owner], start, failures));
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromMinutes(5)), "a worker did not finish");
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));

        // Quiet now: every present key reads its last version, and the statistics add up to what is there.
        long present = 0;
        long keyValueBytes = 0;
        for (int t = 0; t < Threads; t++)
        {
            for (int k = 0; k < KeysPerThread; k++)
            {
                long key = KeyOf(t, k);
                byte[]? value = cache.GetBytes(CacheTestData.Key(key));
                if (value is null)
                {
                    continue;
                }

                Assert.True(models[t][k] != 0, $"key {key} is there though it was removed");
                Assert.True(CacheTestData.IsIntact(value, key, out long version), $"key {key} is torn");
                Assert.Equal(models[t][k], version);
                Assert.Equal(lengths[t][k], value.Length);
                present++;
                keyValueBytes += 8 + value.Length;
            }
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(present, cache.Count);
        Assert.Equal(present, statistics.Entries);
        Assert.Equal(keyValueBytes, statistics.KeyValueBytes);
        Assert.Equal(0, statistics.PinnedBytes);
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);
        Assert.True(statistics.DeadBytes >= 0 && statistics.DeadBytes <= statistics.AllocatedBytes);
        Assert.True(statistics.ReplacedInPlace > 0);
        Assert.True(statistics.SegmentsCompacted > 0);
        Assert.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared);

        // The walk of every segment after all those shrinks: nothing expires, so nothing may go.
        cache.RemoveExpired();
        Assert.Equal(present, cache.Count);
        cache.Clear();
        NativeCacheStatistics cleared = cache.GetStatistics();
        Assert.Equal(0, cleared.Entries);
        Assert.Equal(present, cleared.Cleared);
    }

    private static long KeyOf(int owner, int index) => (owner * 1_000_000L) + index;

    private static void Run(NativeCache cache, int owner, long[] model, int[] lengths, Barrier start, ConcurrentQueue<string> failures)
    {
        try
        {
            var random = new Random(owner * 7919);
            start.SignalAndWait(TimeSpan.FromMinutes(1));
            long version = 0;
            for (int step = 0; step < Steps && failures.IsEmpty; step++)
            {
                int index = random.Next(KeysPerThread);
                long key = KeyOf(owner, index);
                byte[] keyBytes = CacheTestData.Key(key);

                // A lease on one of this thread's keys, or on another thread's, held across updates.
                bool own = random.Next(2) == 0;
                long leased = own ? key : KeyOf(random.Next(Threads), random.Next(KeysPerThread));
                bool open = cache.TryGet(CacheTestData.Key(leased), out NativeCacheLease lease);
                using (lease)
                {
                    byte[] before = open ? lease.Span.ToArray() : [];
                    if (open && !CacheTestData.IsIntact(before, leased, out _))
                    {
                        failures.Enqueue($"key {leased}: a lease opened on a torn value");
                    }

                    // Shrink, regrow to the same size, grow: sizes that go in place and that append.
                    for (int update = 0; update < 3; update++)
                    {
                        int length = random.Next(4) switch
                        {
                            0 => 16,
                            1 => lengths[index] == 0 ? 300 : lengths[index],
                            2 => 16 + random.Next(600),
                            _ => 16 + random.Next(40),
                        };
                        version++;
                        cache.Set(keyBytes, CacheTestData.Value(key, version, length));
                        model[index] = version;
                        lengths[index] = length;
                        CheckRead(cache, key, model[index], lengths[index], failures);
                    }

                    if (random.Next(10) == 0)
                    {
                        _ = cache.Remove(keyBytes);
                        model[index] = 0;
                        lengths[index] = 0;
                        if (cache.GetBytes(keyBytes) is not null)
                        {
                            failures.Enqueue($"key {key}: still there after its owner removed it");
                        }
                    }

                    if (open && !lease.Span.SequenceEqual(before))
                    {
                        failures.Enqueue($"key {leased}: a lease's bytes changed while it was open");
                    }
                }
            }
        }
        catch (Exception exception)
        {
            failures.Enqueue(exception.ToString());
        }
    }

    // Only the owner writes its keys: a read is the last version written, or nothing (evicted).
    private static void CheckRead(NativeCache cache, long key, long version, int length, ConcurrentQueue<string> failures)
    {
        Span<byte> buffer = stackalloc byte[700];
        if (!cache.TryCopyTo(CacheTestData.Key(key), buffer, out int written))
        {
            return;
        }

        if (written != length || !CacheTestData.IsIntact(buffer[..written], key, out long read) || read != version)
        {
            failures.Enqueue($"key {key}: read {written} bytes not version {version} of {length} bytes");
        }
    }
}
