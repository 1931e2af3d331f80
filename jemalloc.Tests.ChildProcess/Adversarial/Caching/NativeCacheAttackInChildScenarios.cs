using System.Buffers;
using System.Buffers.Binary;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: NativeCache attacked where a crash of the process is the risk: a lease whose thread
/// exits without ending it, a GetOrAdd factory whose thread fails or whose process exits mid-write,
/// Dispose and Clear racing every member. Run in checked mode and without.
/// </summary>
internal static class NativeCacheAttackInChildScenarios
{
    internal const string LeaseOfAnExitedThread = "cache-lease-of-an-exited-thread";
    internal const string FactoryThreadFailsMidWrite = "cache-factory-thread-fails-mid-write";
    internal const string ProcessExitsMidWrite = "cache-process-exits-mid-write";
    internal const string DisposeRacesEverything = "cache-dispose-races-everything";
    internal const string ClearRacesLeases = "cache-clear-races-leases";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[LeaseOfAnExitedThread] = LeaseOfAnExitedThreadScenario;
        all[FactoryThreadFailsMidWrite] = FactoryThreadFailsMidWriteScenario;
        all[ProcessExitsMidWrite] = ProcessExitsMidWriteScenario;
        all[DisposeRacesEverything] = DisposeRacesEverythingScenario;
        all[ClearRacesLeases] = ClearRacesLeasesScenario;
    }

    /// <summary>
    /// A thread takes a lease and ends without disposing it: its bytes stay intact and pinned through
    /// Clear and churn, Dispose refuses naming one lease, the budget holds, and the process ends cleanly.
    /// </summary>
    private static void LeaseOfAnExitedThreadScenario()
    {
        var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 2 });
        cache.Set(Key(1), Value(1, 1, 500));
        var thread = new Thread(() =>
        {
            // The lease is a ref struct: it dies with this frame, undisposed.
            Check.True(cache.TryGet(Key(1), out NativeCacheLease lease), "the exited thread's read");
            Check.True(IsIntact(lease.Span, 1, 1), "the exited thread's value");
        });
        thread.Start();
        thread.Join();
        GC.Collect();
        GC.WaitForPendingFinalizers();

        cache.Clear();
        for (int i = 0; i < 30_000; i++)
        {
            cache.Set(Key(i), Value(i, 2, 300));
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Check.True(statistics.PinnedBytes > 0, "the exited thread's lease still pins its segment", statistics.ToString());
        Check.True(statistics.AllocatedBytes <= statistics.BudgetBytes, "the budget with a pinned segment", statistics.ToString());
        try
        {
            cache.Dispose();
            Check.Fail(LeaseOfAnExitedThread, "Dispose went through with a lease open");
        }
        catch (InvalidOperationException e)
        {
            Check.True(e.Message.Contains('1', StringComparison.Ordinal), "Dispose names one open lease", e.Message);
        }

        Check.True(IsIntact(cache.GetBytes(Key(29_999)), 29_999, 2), "the cache after the refused Dispose");
    }

    /// <summary>
    /// The factory's thread writes half a value, then fails: its waiters get the failure, nothing is
    /// added, and the next caller's factory runs. Repeated, with waiters on several threads.
    /// </summary>
    private static void FactoryThreadFailsMidWriteScenario()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 4 });
        for (int round = 0; round < 200; round++)
        {
            byte[] key = Key(round);
            using var inFactory = new ManualResetEventSlim();
            using var release = new ManualResetEventSlim();
            Exception? firstOutcome = null;
            var first = new Thread(() =>
            {
                try
                {
                    cache.GetOrAdd(key, round, (_, r, writer) =>
                    {
                        writer.Write(Value(r, 1, 40_000).AsSpan(0, 20_000));
                        inFactory.Set();
                        release.Wait();
                        throw new ThreadInterruptedException("the writer's thread is going away");
                    }).Dispose();
                }
                catch (Exception e)
                {
                    firstOutcome = e;
                }
            });
            first.Start();
            inFactory.Wait();
            var waiterOutcomes = new Exception?[3];
            var waiters = new Thread[3];
            for (int w = 0; w < waiters.Length; w++)
            {
                int index = w;
                waiters[w] = new Thread(() =>
                {
                    try
                    {
                        using NativeCacheLease lease = cache.GetOrAdd(key, round, static (_, r, writer) => writer.Write(Value(r, 2, 100)));
                        Check.True(IsIntact(lease.Span, round, 2), "a waiter's value after the first factory failed", $"round {round}");
                    }
                    catch (Exception e)
                    {
                        waiterOutcomes[index] = e;
                    }
                });
                waiters[w].Start();
            }

            release.Set();
            first.Join();
            foreach (Thread waiter in waiters)
            {
                waiter.Join();
            }

            Check.True(firstOutcome is ThreadInterruptedException, "the failing factory's caller gets its exception", firstOutcome?.ToString() ?? "none");
            foreach (Exception? outcome in waiterOutcomes)
            {
                // A waiter gets the failure or, if it arrived after, adds its own value.
                Check.True(outcome is null or ThreadInterruptedException, "a waiter's outcome", outcome?.ToString() ?? "none");
            }

            byte[]? stored = cache.GetBytes(key);
            Check.True(stored is null || IsIntact(stored, round, 2), "what the key holds afterwards", stored is null ? "null" : $"{stored.Length} bytes");
        }

        NativeCacheStatistics statistics = cache.GetStatistics();
        Check.Equal(0L, statistics.PinnedBytes, "pinned bytes after every lease ended");
        Check.Equal(statistics.Writes, statistics.Entries + statistics.EvictedForCapacity + statistics.Removed + statistics.Replaced + statistics.Expired + statistics.Cleared, "writes accounted for");
    }

    /// <summary>The process exits from inside a factory while other threads read and write: it ends at once, without a crash or a hang.</summary>
    private static void ProcessExitsMidWriteScenario()
    {
        var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 4 });
        for (int t = 0; t < 2; t++)
        {
            int seed = t;
            new Thread(() =>
            {
                var random = new Random(seed);
                while (true)
                {
                    int key = random.Next(1000);
                    cache.Set(Key(key), Value(key, 1, 16 + random.Next(2000)));
                    if (cache.TryGet(Key(random.Next(1000)), out NativeCacheLease lease))
                    {
                        lease.Dispose();
                    }
                }
            })
            { IsBackground = true }.Start();
        }

        Thread.Sleep(100);
        cache.GetOrAdd(Key(5000), 0, static (_, _, writer) =>
        {
            writer.Write(new byte[50_000]);
            Check.Finish(ProcessExitsMidWrite);
            Environment.Exit(0);
        }).Dispose();
        Check.Fail(ProcessExitsMidWrite, "the process went on after Environment.Exit");
    }

    /// <summary>Dispose tried again and again while three threads use every member: each call completes, is refused, or throws ObjectDisposedException.</summary>
    private static void DisposeRacesEverythingScenario()
    {
        for (int round = 0; round < 20; round++)
        {
            var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 2 });
            int disposed = 0;
            Check.Race(DisposeRacesEverything, TimeSpan.FromMilliseconds(150), int.MaxValue,
                i =>
                {
                    Thread.Sleep(i == 0 ? 20 : 0);
                    if (Volatile.Read(ref disposed) == 0)
                    {
                        Check.UntilNotRefused(cache.Dispose);
                        Volatile.Write(ref disposed, 1);
                    }
                },
                i => Use(cache, i, seed: 1),
                i => Use(cache, i, seed: 2));
            Check.True(Volatile.Read(ref disposed) == 1, "Dispose went through once the leases ended");
            Check.Throws<ObjectDisposedException>("Set after Dispose", () => cache.Set("k", "v"u8));
        }
    }

    /// <summary>Clear again and again while leases are read on other threads: in checked mode a read of freed memory would be caught.</summary>
    private static void ClearRacesLeasesScenario()
    {
        long liveBefore = AllocationLedger.LiveCount;
        var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 4 });
        // The clearing thread writes too; writes racing Clear on other threads are left out (one can be
        // refused with no byte held: reported, being fixed).
        Check.Race(ClearRacesLeases, TimeSpan.FromSeconds(1), int.MaxValue,
            i =>
            {
                for (int key = 0; key < 400; key++)
                {
                    cache.Set(Key(key), Value(key, i, 100 + (key * 13 % 3000)));
                }

                cache.Clear();
            },
            i => ReadUnderClear(cache, i, 7),
            i => ReadUnderClear(cache, i, 11));
        cache.Dispose();
        AllocationLedger.FlushQuarantine();
        Check.Equal(liveBefore, AllocationLedger.LiveCount, "the ledger after Dispose");
    }

    private static void ReadUnderClear(NativeCache cache, int i, int seed)
    {
        int key = (i * seed) % 400;
        if (cache.TryGet(Key(key), out NativeCacheLease lease))
        {
            using (lease)
            {
                byte[] before = lease.Span.ToArray();
                Thread.Yield();
                Check.True(before.AsSpan().SequenceEqual(lease.Span), "a lease's bytes across Clear", $"key {key}");
                Check.True(IsIntact(lease.Span, key, -1), "a value read under Clear", $"key {key}");
            }
        }
    }

    private static void Use(NativeCache cache, int i, int seed)
    {
        int key = (i * seed * 7919) % 300;
        try
        {
            switch (i % 6)
            {
                case 0:
                    cache.Set(Key(key), Value(key, 1, 16 + (i % 2000)));
                    break;
                case 1:
                    cache.GetOrAdd(Key(key), key, static (_, k, writer) => writer.Write(Value(k, 1, 100))).Dispose();
                    break;
                case 2:
                    _ = cache.Remove(Key(key));
                    break;
                case 3:
                    // Not Clear: a write racing it can be refused with no byte held (reported, being fixed).
                    _ = cache.ContainsKey(Key(key));
                    break;
                default:
                    if (cache.TryGet(Key(key), out NativeCacheLease lease))
                    {
                        using (lease)
                        {
                            Check.True(IsIntact(lease.Span, key, 1), "a value read while Dispose races", $"key {key}");
                        }
                    }

                    break;
            }
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private static byte[] Key(long key) => BitConverter.GetBytes(key);

    // A value whose first 16 bytes name its key and version, the rest derived from both.
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

    // version -1: any version.
    private static bool IsIntact(ReadOnlySpan<byte> value, long key, long version)
    {
        if (value.Length < 16 || BinaryPrimitives.ReadInt64LittleEndian(value) != key)
        {
            return false;
        }

        long stored = BinaryPrimitives.ReadInt64LittleEndian(value[8..]);
        if (version != -1 && stored != version)
        {
            return false;
        }

        for (int i = 16; i < value.Length; i++)
        {
            if (value[i] != (byte)(key * 31 + stored * 7 + i))
            {
                return false;
            }
        }

        return true;
    }
}
