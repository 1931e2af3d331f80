using System.Buffers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: a Dispose racing the use of the I/O adapters on other threads: a stream's operations
/// while the owner disposes its writer; pins of pool blocks against their owner's dispose; a pool
/// disposed while threads return and rent; pins, direct unpins, disposes and resets racing; dropped
/// owners finalized while the pool is disposed. Each completes, refuses or throws ObjectDisposedException,
/// and the books balance.
/// </summary>
internal static class IoDisposeRaceScenarios
{
    internal const string IoWriterDisposeVsStream = "io-writer-dispose-vs-stream";
    internal const string IoPoolPinVsDispose = "io-pool-pin-vs-dispose";
    internal const string IoPoolDisposeVsReturns = "io-pool-dispose-vs-returns";
    internal const string IoPoolPinsVsDirectUnpinsDisposeAndReset = "io-pool-pins-vs-direct-unpins-dispose-and-reset";
    internal const string IoPoolFinalizersVsPoolDispose = "io-pool-finalizers-vs-pool-dispose";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[IoWriterDisposeVsStream] = WriterDisposeVsStream;
        all[IoPoolPinVsDispose] = PoolPinVsDispose;
        all[IoPoolDisposeVsReturns] = PoolDisposeVsReturns;
        all[IoPoolPinsVsDirectUnpinsDisposeAndReset] = PoolPinsVsOverUnpinsDisposeAndReset;
        all[IoPoolFinalizersVsPoolDispose] = PoolFinalizersVsPoolDispose;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    private static NativeMemoryStream? s_stream;
    private static IMemoryOwner<byte>? s_owner;

    /// <summary>
    /// The owner disposes a stream's writer (new, so the stream's first write allocates its block, or
    /// already holding data) while another thread writes, reads, seeks and copies through the stream:
    /// every operation completes with the right bytes or throws <see cref="ObjectDisposedException"/>,
    /// and no block is left behind.
    /// </summary>
    private static void WriterDisposeVsStream()
    {
        long live = AllocationLedger.LiveCount;
        long disposes = 0, refused = 0, disposedSeen = 0;
        byte[] pattern = Enumerable.Range(0, 3000).Select(i => (byte)(i * 7)).ToArray();
        Check.RaceUntil("writer dispose vs stream", Budget, firstBodyAtLeast: 500, int.MaxValue,
            i =>
            {
                // Mostly new, empty writers: the stream's first write allocates the block as the dispose runs.
                var writer = i % 4 != 3 ? new NativeBufferWriter<byte>() : new NativeBufferWriter<byte>(pattern.Length);
                if (i % 8 == 3)
                {
                    pattern.CopyTo(writer.GetSpan(pattern.Length));
                    writer.Advance(pattern.Length);
                }

                Volatile.Write(ref s_stream, new NativeMemoryStream(writer, leaveOpen: true));
                Thread.SpinWait(i % 200);
                refused += Check.UntilNotRefused(() => writer.Dispose());
                disposes++;
            },
            i =>
            {
                NativeMemoryStream? stream = Volatile.Read(ref s_stream);
                if (stream is null)
                {
                    return;
                }

                try
                {
                    if (!WritesAndReadsBack(stream, pattern))
                    {
                        Check.Fail("stream over a writer being disposed", $"iteration {i}: read back other bytes than written");
                    }

                    stream.Seek(-100, SeekOrigin.End);
                    var copy = new MemoryStream();
                    stream.CopyTo(copy, 37);
                    if (!copy.ToArray().AsSpan().SequenceEqual(pattern.AsSpan(pattern.Length - 100)))
                    {
                        Check.Fail("stream over a writer being disposed", $"iteration {i}: CopyTo gave other bytes than written");
                    }
                }
                catch (ObjectDisposedException)
                {
                    disposedSeen++;
                }
            });
        Volatile.Write(ref s_stream, null);
        Check.Info($"INFO disposes={disposes} refused-in-use={refused} operations-that-saw-disposed={disposedSeen}");
        Check.True(disposes > 100, "enough iterations ran", $"only {disposes} disposes");
        Check.True(disposedSeen > 0, "the operations met disposed writers", "no operation ever saw a disposed writer: the race did not happen");
        Check.Equal(live, AllocationLedger.LiveCount, "no writer block is left behind by a dispose racing the stream's first write");
    }

    /// <summary>
    /// One thread pins and unpins pool blocks (as a socket would) while another disposes their owners:
    /// a pin after the dispose throws <see cref="ObjectDisposedException"/>, a block disposed while
    /// pinned goes back to the pool at its last unpin, and the pool's books and the ledger balance at the end.
    /// </summary>
    private static void PoolPinVsDispose()
    {
        using var pool = new JemMemoryPool(budgetBytes: 1 << 20);
        long live = AllocationLedger.LiveCount;
        long pins = 0, disposedSeen = 0;
        Check.RaceUntil("pool pin vs dispose", Budget, firstBodyAtLeast: 500, int.MaxValue,
            i =>
            {
                IMemoryOwner<byte> owner = pool.Rent(1024 + i % 3000);
                Volatile.Write(ref s_owner, owner);
                Thread.SpinWait(i % 100);
                owner.Dispose();
                owner.Dispose();
            },
            i =>
            {
                IMemoryOwner<byte>? owner = Volatile.Read(ref s_owner);
                if (owner is null)
                {
                    return;
                }

                try
                {
                    Memory<byte> memory = owner.Memory;
                    MemoryHandle handle = memory[(i % 1000)..].Pin();
                    MemoryHandle copy = handle;
                    pins++;
                    Thread.SpinWait(20);
                    handle.Dispose();
                    copy.Dispose();
                }
                catch (ObjectDisposedException)
                {
                    disposedSeen++;
                }
            });
        Volatile.Write(ref s_owner, null);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Check.Info($"INFO rents={stats.RentCount} pins={pins} pins-that-saw-disposed={disposedSeen}");
        Check.True(pins > 0 && disposedSeen > 0, "the race happened", $"pins={pins} disposed-seen={disposedSeen}");
        Check.Equal(0L, stats.OutstandingBytes, "every block went back to the pool's books");
        Check.Equal(stats.RentCount, stats.ReturnCount, "every rent was returned once");
        Check.Equal(live + stats.CachedCount, AllocationLedger.LiveCount, "every block, pinned or not, is kept by the pool or freed");
        pool.Trim();
        Check.Equal(live, AllocationLedger.LiveCount, "the pool's trim freed every kept block");
    }

    /// <summary>
    /// Threads rent and return blocks of every kept size while the pool is disposed under them (by two
    /// threads at once): rents
    /// after the dispose throw <see cref="ObjectDisposedException"/>, every block returned before the
    /// dispose is freed by it and every block returned after is freed by its return, so the ledger
    /// balances (no kept block leaks) and no block is freed twice (the process lives).
    /// </summary>
    private static void PoolDisposeVsReturns()
    {
        long live = AllocationLedger.LiveCount;
        long rounds = 0, refusedRents = 0, returnedAfterDispose = 0;
        for (int round = 0; round < 200; round++)
        {
            var pool = new JemMemoryPool(maxCachedBytes: 4 << 20);
            var owners = new System.Collections.Concurrent.ConcurrentQueue<IMemoryOwner<byte>>();
            for (int i = 0; i < 64; i++)
            {
                owners.Enqueue(pool.Rent(64 << (i % 12)));
            }

            Check.Race("pool dispose vs returns", TimeSpan.FromSeconds(5), 1,
                _ =>
                {
                    Thread.SpinWait(round * 37 % 5000);
                    pool.Dispose();
                },
                _ =>
                {
                    // A second dispose on another thread, at about the same time.
                    Thread.SpinWait(round * 41 % 5000);
                    pool.Dispose();
                },
                _ => ReturnAndRent(pool, owners, ref refusedRents, ref returnedAfterDispose),
                _ => ReturnAndRent(pool, owners, ref refusedRents, ref returnedAfterDispose));
            while (owners.TryDequeue(out IMemoryOwner<byte>? left))
            {
                left.Dispose();
            }

            JemMemoryPoolStatistics stats = pool.GetStatistics();
            Check.Equal(0L, stats.CachedCount, "a disposed pool keeps no block");
            Check.Equal(stats.RentCount, stats.ReturnCount, "every rent was returned once");
            Check.Equal(live, AllocationLedger.LiveCount, "every block was freed once the pool was disposed and its owners returned");
            rounds++;
        }

        Check.Info($"INFO rounds={rounds} rents-refused={refusedRents} returns-after-dispose={returnedAfterDispose}");
        Check.True(refusedRents > 0, "some rents met the disposed pool", "no rent ever met a disposed pool: the race did not happen");

        static void ReturnAndRent(JemMemoryPool pool, System.Collections.Concurrent.ConcurrentQueue<IMemoryOwner<byte>> owners, ref long refused, ref long afterDispose)
        {
            for (int i = 0; i < 400 && owners.TryDequeue(out IMemoryOwner<byte>? owner); i++)
            {
                bool disposedBefore = pool.IsDisposed;
                owner.Dispose();
                if (disposedBefore)
                {
                    Interlocked.Increment(ref afterDispose);
                }

                try
                {
                    owners.Enqueue(pool.Rent(64 << (i % 12)));
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref refused);
                }
            }
        }
    }

    /// <summary>
    /// Owners of an arena pool are pinned by one thread, unpinned directly through their
    /// <see cref="MemoryManager{T}"/> by another (a hostile user trying to end pins it does not own),
    /// and disposed, with the arena reset now and then, by a third: every direct unpin is refused and
    /// ends no pin, every other call completes or throws <see cref="ObjectDisposedException"/> or
    /// <see cref="InvalidOperationException"/>; at the end no pin is left in the ledger (the arena
    /// resets), the books balance and nothing leaks.
    /// </summary>
    private static void PoolPinsVsOverUnpinsDisposeAndReset()
    {
        long live = AllocationLedger.LiveCount;
        using var arena = new JemArena();
        var pool = new JemMemoryPool(arena: arena);
        long pins = 0, stolen = 0, directUnpins = 0, resets = 0, refused = 0;
        Check.RaceUntil("pool pins vs direct unpins, dispose and reset", Budget, firstBodyAtLeast: 500, int.MaxValue,
            i =>
            {
                IMemoryOwner<byte> owner = pool.Rent(512 << (i % 6));
                Volatile.Write(ref s_owner, owner);
                Thread.SpinWait(i % 200);
                owner.Dispose();
                if (i % 16 == 0)
                {
                    try
                    {
                        arena.Reset();
                        resets++;
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        refused++;
                    }
                }
            },
            i =>
            {
                IMemoryOwner<byte>? owner = Volatile.Read(ref s_owner);
                if (owner is null)
                {
                    return;
                }

                try
                {
                    MemoryHandle pin = owner.Memory.Pin();
                    pins++;
                    Thread.SpinWait(10);
                    try
                    {
                        pin.Dispose();
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        stolen++;
                    }
                }
                catch (ObjectDisposedException)
                {
                }
            },
            i =>
            {
                IMemoryOwner<byte>? owner = Volatile.Read(ref s_owner);
                if (owner is MemoryManager<byte> manager)
                {
                    try
                    {
                        manager.Unpin();
                        Check.True(false, "a direct MemoryManager.Unpin() is refused");
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        directUnpins++;
                    }
                }
            });
        Volatile.Write(ref s_owner, null);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Check.Info($"INFO rents={stats.RentCount} pins={pins} direct-unpins-refused={directUnpins} resets={resets} resets-refused={refused}");
        Check.True(pins > 0 && directUnpins > 0, "the pins and the direct unpins ran", $"pins={pins} direct-unpins={directUnpins}");
        Check.Equal(0L, stolen, "no pin was ended by anybody but its own handle");
        Check.Equal(stats.RentCount, stats.ReturnCount, "every rent was returned once");
        Check.Equal(0L, stats.OutstandingBytes, "the books balance");
        Check.NoThrow("no pin is left in the ledger: the arena resets", arena.Reset);
        Check.Equal(0L, arena.UsedBytes, "the arena is empty after its reset");
        pool.Dispose();
        Check.Equal(live, AllocationLedger.LiveCount, "nothing leaked");
    }

    /// <summary>
    /// Threads rent blocks and drop their owners (never disposed) while the garbage collector runs
    /// their finalizers and the pool is disposed under them: every block set aside before the
    /// dispose is freed by it, every one finalized after is freed at once, so nothing leaks and
    /// nothing is freed twice.
    /// </summary>
    private static void PoolFinalizersVsPoolDispose()
    {
        long live = AllocationLedger.LiveCount;
        long dropped = 0, refused = 0;
        for (int round = 0; round < 20; round++)
        {
            var pool = new JemMemoryPool(maxCachedBytes: 1 << 20);
            Check.Race("pool finalizers vs pool dispose", TimeSpan.FromSeconds(5), 1,
                _ =>
                {
                    Thread.Sleep(round % 5);
                    GC.Collect();
                    pool.Dispose();
                },
                _ => Drop(pool, ref dropped, ref refused),
                _ => Drop(pool, ref dropped, ref refused));
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }

            JemMemoryPoolStatistics stats = pool.GetStatistics();
            Check.Equal(stats.RentCount, stats.ReturnCount, "every dropped owner was counted as returned once");
            Check.Equal(0L, stats.SetAsideCount, "a disposed pool holds no set-aside block");
            Check.Equal(live, AllocationLedger.LiveCount, "every dropped owner's block was freed once");
        }

        Check.Info($"INFO dropped={dropped} rents-refused={refused}");
        Check.True(refused > 0, "some rents met the disposed pool", "the race did not happen");

        static void Drop(JemMemoryPool pool, ref long dropped, ref long refused)
        {
            for (int i = 0; i < 3000; i++)
            {
                try
                {
                    pool.Rent(64 << (i % 10)).Memory.Span[0] = 1;
                    Interlocked.Increment(ref dropped);
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref refused);
                    return;
                }

                if (i % 500 == 0)
                {
                    GC.Collect();
                }
            }
        }
    }

    /// <summary>Writes <paramref name="pattern"/> at the start of the stream and reads it back: whether the bytes read are the bytes written.</summary>
    internal static bool WritesAndReadsBack(NativeMemoryStream stream, byte[] pattern)
    {
        stream.Position = 0;
        stream.Write(pattern);
        stream.Position = 0;
        byte[] back = new byte[pattern.Length];
        stream.ReadExactly(back);
        return back.AsSpan().SequenceEqual(pattern);
    }
}
