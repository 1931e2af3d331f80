using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Struct values that change size in place on many threads, and the smallest budget churned by values
/// that shrink, regrow and grow: every read is a whole value the writer wrote, no write is refused with
/// no lease open, and the statistics match a model.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheInPlaceChurnTests : LeakCheckedTest
{
    [StructLayout(LayoutKind.Sequential)]
    private struct Wide
    {
        public long Key;
        public long A;
        public long B;
        public long C;
        public long D;
        public long E;
        public long F;
        public long G;

        public static Wide Of(long key, long version) => new() { Key = key, A = version, B = version, C = version, D = version, E = version, F = version, G = version };

        public readonly bool IsWhole(long key) => Key == key && A == B && B == C && C == D && D == E && E == F && F == G;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Struct_values_changing_size_in_place_are_never_read_torn_nor_as_the_wrong_type(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        const int Threads = 4;
        const int Keys = 64;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 2, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        var failures = new ConcurrentQueue<string>();
        var threads = new Thread[Threads];
        using var start = new Barrier(Threads);
        for (int t = 0; t < Threads; t++)
        {
            int owner = t;
            threads[t] = new Thread(() =>
            {
                try
                {
                    var random = new Random(owner);
                    start.SignalAndWait(TimeSpan.FromMinutes(1));
                    for (long version = 1; version <= 20_000 && failures.IsEmpty; version++)
                    {
                        long key = (owner * 1000L) + random.Next(Keys);
                        bool wide = random.Next(2) == 0;
                        if (wide)
                        {
                            cache.SetValue(key, Wide.Of(key, version));
                            if (!cache.TryGetValue(key, out Wide read) || !read.IsWhole(key) || read.A != version)
                            {
                                failures.Enqueue($"key {key}: wide version {version} read as {read.A}");
                            }
                        }
                        else
                        {
                            cache.SetValue(key, version);
                            if (!cache.TryGetValue(key, out long read) || read != version)
                            {
                                failures.Enqueue($"key {key}: narrow version {version} read as {read}");
                            }
                        }

                        // Another thread's key: whichever size it has now, read whole.
                        long other = (random.Next(Threads) * 1000L) + random.Next(Keys);
                        try
                        {
                            if (cache.TryGetValue(other, out Wide theirs) && !theirs.IsWhole(other))
                            {
                                failures.Enqueue($"key {other}: a wide value read torn");
                            }
                        }
                        catch (InvalidOperationException)
                        {
                            // It is narrow just now: the documented refusal of a read of the wrong size.
                        }
                    }
                }
                catch (Exception exception)
                {
                    failures.Enqueue(exception.ToString());
                }
            });
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromMinutes(5)), "a worker did not finish");
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.ReplacedInPlace > 0);
        Assert.Equal(Threads * Keys, statistics.Entries);
        Assert.Throws<InvalidOperationException>(() => cache.TryGetValue(0L, out Wide _) && cache.TryGetValue(0L, out long _));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void The_smallest_budget_churned_by_shrinking_and_growing_values_refuses_no_write_and_matches_a_model(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        var model = new Dictionary<long, (long Version, int Length)>();
        var random = new Random(42);
        for (long step = 1; step <= 60_000; step++)
        {
            long key = random.Next(4000);
            int roll = random.Next(20);
            if (roll == 0)
            {
                _ = cache.Remove(CacheTestData.Key(key));
                model.Remove(key);
                continue;
            }

            int length = roll switch
            {
                < 6 => 16,
                < 12 => model.TryGetValue(key, out var last) ? last.Length : 200,
                < 19 => 16 + random.Next(3000),
                _ => 16 + random.Next(60_000),
            };
            cache.Set(CacheTestData.Key(key), CacheTestData.Value(key, step, length));
            model[key] = (step, length);
            byte[]? read = cache.GetBytes(CacheTestData.Key(key));
            Assert.True(read is not null && read.Length == length && CacheTestData.IsIntact(read, key, out long version) && version == step, $"key {key} at step {step}");
            if (step % 97 == 0)
            {
                NativeCacheStatistics sample = cache.GetStatistics();
                Assert.True(sample.AllocatedBytes <= sample.BudgetBytes, $"{sample.AllocatedBytes} allocated of {sample.BudgetBytes}");
                Assert.True(sample.DeadBytes >= 0 && sample.DeadBytes <= sample.AllocatedBytes);
            }
        }

        long present = 0;
        long keyValueBytes = 0;
        foreach ((long key, (long version, int length)) in model)
        {
            byte[]? read = cache.GetBytes(CacheTestData.Key(key));
            if (read is null)
            {
                continue;
            }

            Assert.True(read.Length == length && CacheTestData.IsIntact(read, key, out long found) && found == version, $"key {key}");
            present++;
            keyValueBytes += 8 + length;
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(present, statistics.Entries);
        Assert.Equal(keyValueBytes, statistics.KeyValueBytes);
        Assert.True(statistics.ReplacedInPlace > 0);
        Assert.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared);
        cache.RemoveExpired();
        Assert.Equal(present, cache.Count);
    }
}
