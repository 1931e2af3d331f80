using System.Buffers.Binary;
using System.Collections.Concurrent;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Caching.Tests;

/// <summary>
/// NativeDistributedCache attacked through its interfaces: the IDistributedCache contract under
/// concurrent Set, Remove, Refresh and Get; a sliding expiry refreshed from many threads; Dispose while
/// HybridCache uses it. Each test leaves the ledger as it found it.
/// </summary>
public sealed class DistributedCacheAttackTests : LedgerBalanced
{
    [Fact]
    public void Concurrent_Set_Remove_Refresh_and_Get_return_only_values_written_for_their_key()
    {
        using var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 4L << 20 });
        var failures = new ConcurrentQueue<string>();
        long[] versions = new long[200];
        var threads = new Thread[4];
        for (int t = 0; t < threads.Length; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                try
                {
                    var random = new Random(seed);
                    var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(5) };
                    var absolute = new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(5) };
                    for (int step = 0; step < 30_000; step++)
                    {
                        int key = random.Next(versions.Length);
                        string name = $"key:{key}";
                        switch (random.Next(6))
                        {
                            case 0:
                                cache.Set(name, Value(key, Interlocked.Increment(ref versions[key]), 16 + random.Next(4000)), random.Next(2) == 0 ? sliding : absolute);
                                break;
                            case 1:
                                cache.Remove(name);
                                break;
                            case 2:
                                cache.Refresh(name);
                                break;
                            default:
                                byte[]? value = cache.Get(name);
                                if (value is not null && !IsIntact(value, key))
                                {
                                    failures.Enqueue($"{name}: a value of {value.Length} bytes not written for it");
                                }

                                break;
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
            thread.Join();
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));
        NativeCacheStatistics statistics = cache.Cache.GetStatistics();
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);
        Assert.Equal(0, statistics.PinnedBytes);
    }

    [Fact]
    public async Task A_sliding_expiry_refreshed_from_many_threads_lives_while_refreshed_and_ends_a_window_after()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 6, 1, 12, 0, 0, TimeSpan.Zero));
        using var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 4L << 20, TimeProvider = clock });
        await cache.SetAsync("s", Value(1, 1, 64), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) });
        for (int step = 0; step < 30; step++)
        {
            // Each step: 9 s pass, then eight threads refresh at once (sync and async), all before the window ends.
            clock.Advance(TimeSpan.FromSeconds(9));
            Task[] refreshes = Enumerable.Range(0, 8)
                .Select(i => Task.Run(async () =>
                {
                    if (i % 2 == 0)
                    {
                        cache.Refresh("s");
                    }
                    else
                    {
                        await cache.RefreshAsync("s");
                    }
                }))
                .ToArray();
            await Task.WhenAll(refreshes);
            Assert.True(IsIntact(cache.Get("s") ?? [], 1), $"the entry was gone at step {step}");
        }

        clock.Advance(TimeSpan.FromSeconds(9));
        Assert.NotNull(cache.Get("s"));
        clock.Advance(TimeSpan.FromSeconds(10) + TimeSpan.FromMilliseconds(1));
        Assert.Null(cache.Get("s"));
        cache.Refresh("s");
        Assert.Null(cache.Get("s"));
    }

    [Fact]
    public async Task Disposing_the_container_while_HybridCache_uses_it_completes_or_refuses_each_call_and_frees_everything()
    {
        ServiceProvider provider = new ServiceCollection()
            .AddNativeDistributedCache(options => options.BudgetBytes = 8L << 20)
            .AddHybridCache().Services
            .BuildServiceProvider();
        HybridCache hybrid = provider.GetRequiredService<HybridCache>();
        var failures = new ConcurrentQueue<string>();
        using var stop = new CancellationTokenSource();
        Task[] users = Enumerable.Range(0, 4).Select(seed => Task.Run(async () =>
        {
            var random = new Random(seed);
            while (!stop.IsCancellationRequested)
            {
                int key = random.Next(300);
                try
                {
                    int value = await hybrid.GetOrCreateAsync($"h:{key}", key, static (k, _) => ValueTask.FromResult(k * 3));
                    if (value != key * 3)
                    {
                        failures.Enqueue($"h:{key} gave {value}");
                    }

                    if (random.Next(5) == 0)
                    {
                        await hybrid.RemoveAsync($"h:{key}");
                    }
                }
                catch (ObjectDisposedException)
                {
                    // The container (and the cache) went away: the documented refusal.
                }
                catch (Exception exception)
                {
                    failures.Enqueue(exception.ToString());
                }
            }
        })).ToArray();

        await Task.Delay(200);
        await provider.DisposeAsync();
        await Task.Delay(100);
        await stop.CancelAsync();
        await Task.WhenAll(users);
        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(5)));
        Assert.Throws<ObjectDisposedException>(() => provider.GetRequiredService<IDistributedCache>());
    }

    [Fact]
    public async Task Canceled_tokens_change_nothing_at_any_call()
    {
        using var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 4L << 20 });
        cache.Set("k", Value(1, 1, 32), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
        using var canceled = new CancellationTokenSource();
        await canceled.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cache.SetAsync("k", Value(1, 2, 32), new DistributedCacheEntryOptions(), canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cache.RemoveAsync("k", canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cache.RefreshAsync("k", canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cache.GetAsync("k", canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cache.SetAsync("k", new System.Buffers.ReadOnlySequence<byte>(Value(1, 3, 32)), new DistributedCacheEntryOptions(), canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cache.TryGetAsync("k", new System.Buffers.ArrayBufferWriter<byte>(), canceled.Token));
        byte[]? value = cache.Get("k");
        Assert.NotNull(value);
        Assert.Equal(1, BinaryPrimitives.ReadInt64LittleEndian(value.AsSpan(8)));
    }

    private static byte[] Value(long key, long version, int length)
    {
        byte[] value = new byte[length];
        for (int i = 16; i < length; i++)
        {
            value[i] = (byte)(key * 31 + version * 7 + i);
        }

        BinaryPrimitives.WriteInt64LittleEndian(value, key);
        BinaryPrimitives.WriteInt64LittleEndian(value.AsSpan(8), version);
        return value;
    }

    private static bool IsIntact(ReadOnlySpan<byte> value, long key)
    {
        if (value.Length < 16 || BinaryPrimitives.ReadInt64LittleEndian(value) != key)
        {
            return false;
        }

        long version = BinaryPrimitives.ReadInt64LittleEndian(value[8..]);
        for (int i = 16; i < value.Length; i++)
        {
            if (value[i] != (byte)(key * 31 + version * 7 + i))
            {
                return false;
            }
        }

        return true;
    }
}
