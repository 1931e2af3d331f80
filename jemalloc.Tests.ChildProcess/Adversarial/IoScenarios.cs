using System.Buffers;
using System.Runtime.CompilerServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The I/O adapters under races and in checked mode: a stream's operations on one thread while the
/// owner disposes its writer or resets its arena on another, pins of pool blocks against their
/// owner's dispose, and the spans the <see cref="IBufferWriter{T}"/> and <see cref="IMemoryOwner{T}"/>
/// contracts leave to the user (used after a dispose or a finalizer), which checked mode must catch.
/// </summary>
internal static class IoScenarios
{
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    private static NativeMemoryStream? s_stream;
    private static IMemoryOwner<byte>? s_owner;

    internal static void Register(Dictionary<string, Action> all)
    {
        all["io-writer-dispose-vs-stream"] = WriterDisposeVsStream;
        all["io-arena-reset-vs-stream"] = ArenaResetVsStream;
        all["io-arena-reset-vs-writer-spans"] = ArenaResetVsWriterSpans;
        all["io-pool-pin-vs-dispose"] = PoolPinVsDispose;
        all["io-pool-clear-vs-arena-reset"] = PoolClearVsArenaReset;
        all["io-pool-dispose-vs-returns"] = PoolDisposeVsReturns;
        all["io-pool-pins-vs-direct-unpins-dispose-and-reset"] = PoolPinsVsOverUnpinsDisposeAndReset;
        all["io-pool-finalizers-vs-pool-dispose"] = PoolFinalizersVsPoolDispose;
        all["checked-pool-dropped-owner-span"] = PoolDroppedOwnerSpan;
        all["checked-writer-span-after-dispose"] = WriterSpanAfterDispose;
        all["io-writer-span-after-finalizer"] = WriterSpanAfterFinalizer;
        all["checked-pool-span-after-dispose"] = PoolSpanAfterDispose;
    }

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
    /// The owner resets the arena a stream's writer grows in while another thread writes and reads
    /// through the stream: the reset is refused while an operation runs, and afterwards every
    /// operation throws <see cref="ObjectDisposedException"/>; the bytes read are the bytes written.
    /// </summary>
    private static void ArenaResetVsStream()
    {
        using var arena = new JemArena();
        long resets = 0, refused = 0, disposedSeen = 0;
        byte[] pattern = Enumerable.Range(0, 5000).Select(i => (byte)(i * 3)).ToArray();
        Check.RaceUntil("arena reset vs stream", Budget, firstBodyAtLeast: 300, int.MaxValue,
            i =>
            {
                Volatile.Write(ref s_stream, new NativeMemoryStream(new NativeBufferWriter<byte>(arena, 64)));
                Thread.SpinWait(i % 300);
                refused += Check.UntilNotRefused(() => arena.Reset());
                resets++;
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
                    // Grows the block several times inside the arena.
                    if (!WritesAndReadsBack(stream, pattern))
                    {
                        Check.Fail("stream in an arena being reset", $"iteration {i}: read back other bytes than written");
                    }
                }
                catch (ObjectDisposedException)
                {
                    disposedSeen++;
                }
            });
        Volatile.Write(ref s_stream, null);
        Check.Info($"INFO resets={resets} refused-in-use={refused} operations-that-saw-reset={disposedSeen}");
        Check.True(resets > 50, "enough iterations ran", $"only {resets} resets");
        Check.True(disposedSeen > 0, "the operations met reset writers", "no operation ever saw a reset writer: the race did not happen");
        Check.Equal(0L, arena.UsedBytes, "the arena is empty after the last reset");
    }

    /// <summary>
    /// A thread writes through the spans of writers in an arena while another resets the arena and
    /// at once fills new allocations in it with another pattern: a reset that comes before the writer's
    /// first span frees the block (the writer then throws <see cref="ObjectDisposedException"/>); once a
    /// span went out, the reset is refused until the writer's dispose, so the span keeps what was
    /// written instead of showing the next allocation's bytes.
    /// </summary>
    private static void ArenaResetVsWriterSpans()
    {
        using var arena = new JemArena();
        long granted = 0, refused = 0, disposedSeen = 0, spans = 0;
        Check.RaceUntilMet("arena reset vs writer spans", Budget,
            () => Volatile.Read(ref refused) > 100 && Volatile.Read(ref spans) > 100 && Volatile.Read(ref granted) > 10, int.MaxValue,
            i =>
            {
                try
                {
                    arena.Reset();
                    Interlocked.Increment(ref granted);
                    // What the arena hands out next lands where the freed blocks were.
                    for (int k = 0; k < 4; k++)
                    {
                        using SafeArray<byte> next = arena.CreateArray<byte>(256);
                        next.Fill(0xEE);
                    }
                }
                catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                {
                    Interlocked.Increment(ref refused);
                }
            },
            i =>
            {
                byte mark = (byte)(i % 200 + 1);
                NativeBufferWriter<byte> writer;
                try
                {
                    writer = new NativeBufferWriter<byte>(arena, 256);
                }
                catch (ObjectDisposedException)
                {
                    return;
                }

                try
                {
                    Span<byte> span = writer.GetSpan(256);
                    span.Fill(mark);
                    Interlocked.Increment(ref spans);
                    Thread.SpinWait(i % 500);
                    if (span.ContainsAnyExcept(mark))
                    {
                        Check.Fail("writer spans in an arena being reset", $"iteration {i}: the span shows other bytes than it was given: a reset freed the block under it");
                    }

                    writer.Advance(256);
                    if (writer.WrittenSpan.ContainsAnyExcept(mark))
                    {
                        Check.Fail("writer spans in an arena being reset", $"iteration {i}: the written elements changed under the writer");
                    }
                }
                catch (ObjectDisposedException)
                {
                    // The reset came before the first span: the block was freed, the writer knows it.
                    Interlocked.Increment(ref disposedSeen);
                }
                finally
                {
                    writer.Dispose();
                }
            });
        Check.Info($"INFO resets={granted} refused-while-held={refused} spans={spans} writers-that-saw-reset={disposedSeen}");
        Check.True(refused > 0, "resets met writers that held spans", "no reset was ever refused: the race did not happen");
        Check.True(granted > 0, "some resets ran between writers", "no reset ever ran");
        Check.Equal(0, Check.UntilNotRefused(() => arena.Reset()), "the arena resets once every writer is disposed");
        Check.Equal(0L, arena.UsedBytes, "the arena is empty after the last reset");
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
    /// A clearing pool hands out the 1 MiB blocks it kept in an arena while another thread resets the
    /// arena and at once fills a new array in it with 0xFF: the rent's clear of a kept block must never
    /// land in memory the reset freed (the array would read zeros), so the reset is refused while the
    /// clear runs, or the rent takes a new block.
    /// </summary>
    private static void PoolClearVsArenaReset()
    {
        const int size = 1 << 20;
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena, clearBlocks: true);
        long resets = 0, refused = 0, corrupted = 0, rents = 0;
        Check.RaceUntil("pool clear vs arena reset", Budget, firstBodyAtLeast: 300, int.MaxValue,
            i =>
            {
                refused += Check.UntilNotRefused(() => arena.Reset());
                resets++;

                // The reset freed the pool's kept block: this array most likely gets its memory.
                using SafeArray<byte> array = new(size, 0xFF, arena.Options);
                Thread.SpinWait(2000);
                using MemoryLease<byte> lease = array.Lease();
                int zeroAt = lease.Span.IndexOfAnyExcept((byte)0xFF);
                if (zeroAt >= 0)
                {
                    corrupted++;
                    Check.Fail("pool clear vs arena reset", $"iteration {i}: byte {zeroAt:N0} of an array made after the reset was overwritten with {lease.Span[zeroAt]}");
                }
            },
            i =>
            {
                try
                {
                    using IMemoryOwner<byte> owner = pool.Rent(size);
                    rents++;
                    // Pinned, the block cannot be reset under the read (a span alone would be the user's race).
                    using MemoryHandle pin = owner.Memory.Pin();
                    if (owner.Memory.Span.IndexOfAnyExcept((byte)0) >= 0)
                    {
                        Check.Fail("pool clear vs arena reset", $"iteration {i}: a rent of a clearing pool did not read as zero");
                    }
                }
                catch (ObjectDisposedException)
                {
                    // The reset came between the rent and the pin: the owner says so.
                }
            });
        Check.Info($"INFO resets={resets} refused-in-use={refused} rents={rents} corrupted={corrupted}");
        Check.True(resets > 50 && rents > 50, "enough iterations ran", $"resets={resets} rents={rents}");
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

    /// <summary>
    /// In checked mode a span of an owner dropped without dispose stays intact after its finalizer
    /// (the block is set aside, not poisoned: the span may be in use), and reads poison once the
    /// pool's dispose freed it, where a write through it is reported.
    /// </summary>
    private static void PoolDroppedOwnerSpan()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        var pool = new JemMemoryPool();
        Span<byte> span = SpanOfDroppedOwner(pool, 2048);
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Check.Equal(1L, pool.GetStatistics().SetAsideCount, "the finalized owner's block is set aside");
        Check.Equal(0L, RaceScenarios.CountNot(span, (byte)0x5A), "a set-aside block is neither poisoned nor reused");
        pool.Dispose();
        Check.Equal(0L, RaceScenarios.CountNot(span, (byte)0xDB), "the pool's dispose freed and poisoned the set-aside block");
        span[9] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "a write through it after the pool's dispose is reported");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Span<byte> SpanOfDroppedOwner(JemMemoryPool pool, int size)
    {
        Span<byte> span = pool.Rent(size).Memory.Span;
        span.Fill(0x5A);
        return span;
    }

    /// <summary>
    /// A span from <see cref="NativeBufferWriter{T}.GetSpan"/> used after <see cref="NativeBufferWriter{T}.Dispose"/>
    /// on the same thread breaks the <see cref="IBufferWriter{T}"/> contract and cannot be checked; in
    /// checked mode it reads poison and a write through it is reported.
    /// </summary>
    private static void WriterSpanAfterDispose()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        var writer = new NativeBufferWriter<byte>(4096);
        Span<byte> stale = writer.GetSpan(4096)[..4096];
        stale.Fill(0x5A);
        writer.Advance(4096);
        writer.Dispose();

        Check.Equal(0L, RaceScenarios.CountNot(stale, (byte)0xDB), "a span used after the writer's dispose reads poison");
        stale[100] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "a write through a span after the writer's dispose is reported");
    }

    /// <summary>
    /// Spans from writers that are then dropped (the <see cref="System.Buffers.ArrayBufferWriter{T}"/>
    /// idiom of returning a writer's <c>WrittenSpan</c>, and a <c>GetSpan</c> written through later):
    /// the finalizer runs while the spans are in use, and must leave their blocks allocated, so that
    /// they keep their bytes while new structures are made and filled, and a write through one lands
    /// in its own block, not in a live structure. The ledger lists the blocks left behind.
    /// </summary>
    private static void WriterSpanAfterFinalizer()
    {
        long live = AllocationLedger.LiveCount;
        ReadOnlySpan<byte> written = WrittenSpanOfDroppedWriter(1 << 16);
        Span<byte> free = SpanOfDroppedWriter(4096);
        var made = new List<SafeArray<byte>>();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            made.Add(new SafeArray<byte>(1 << 16, 0x22));
            made.Add(new SafeArray<byte>(4096, 0x33));
        }

        Check.Equal(0L, RaceScenarios.CountNot(written, (byte)0x11), "a finalized writer's WrittenSpan keeps the bytes written");
        Check.Equal(0L, RaceScenarios.CountNot(free, (byte)0x5A), "a finalized writer's GetSpan keeps the bytes written");
        free.Fill(0x44);
        Check.True(made.TrueForAll(a => RaceScenarios.CountNot(a.ToArray(), a.Length == 4096 ? (byte)0x33 : (byte)0x22) == 0),
            "a write through a finalized writer's span lands in no live structure", "a structure made after the finalizer changed");
        Check.Equal(live + 2 + made.Count, AllocationLedger.LiveCount, "the finalized writers' blocks stay allocated, listed by the ledger");
        Check.Equal(2, AllocationLedger.Snapshot().Count(a => a.Kind == AllocationKind.BufferWriter), "the ledger lists both writers' blocks");
        made.ForEach(a => a.Dispose());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ReadOnlySpan<byte> WrittenSpanOfDroppedWriter(int n)
    {
        var writer = new NativeBufferWriter<byte>(n);
        writer.GetSpan(n)[..n].Fill(0x11);
        writer.Advance(n);
        return writer.WrittenSpan;
    }

    /// <summary>A span of a pool block kept past its owner's dispose reads poison in checked mode, and a write through it is reported.</summary>
    private static void PoolSpanAfterDispose()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(2048);
        Span<byte> stale = owner.Memory.Span;
        stale.Fill(0x5A);
        owner.Dispose();
        Check.Equal(0L, pool.GetStatistics().CachedCount, "checked mode keeps no returned block for the next rent");

        Check.Equal(0L, RaceScenarios.CountNot(stale, (byte)0xDB), "a pool block's span used after its owner's dispose reads poison");
        stale[0] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "a write through it is reported");

        // A block kept before checked mode was turned on is not handed out while it is on.
        AllocationLedger.CheckedMode = false;
        pool.Rent(4096).Dispose();
        Check.Equal(1L, pool.GetStatistics().CachedCount, "without checked mode the returned block is kept");
        AllocationLedger.CheckedMode = true;
        IMemoryOwner<byte> next = pool.Rent(4096);
        Check.Equal(1L, pool.GetStatistics().CachedCount, "checked mode rents a new block instead of the kept one");
        Span<byte> nextSpan = next.Memory.Span;
        nextSpan.Fill(0x33);
        next.Dispose();
        Check.Equal(0L, RaceScenarios.CountNot(nextSpan, (byte)0xDB), "the block rented in checked mode reads poison after its owner's dispose");
        pool.Trim();
        Check.Equal(0L, pool.GetStatistics().CachedCount, "the trim freed the block kept before");
    }

    /// <summary>Writes <paramref name="pattern"/> at the start of the stream and reads it back: whether the bytes read are the bytes written.</summary>
    private static bool WritesAndReadsBack(NativeMemoryStream stream, byte[] pattern)
    {
        stream.Position = 0;
        stream.Write(pattern);
        stream.Position = 0;
        byte[] back = new byte[pattern.Length];
        stream.ReadExactly(back);
        return back.AsSpan().SequenceEqual(pattern);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static unsafe Span<byte> SpanOfDroppedWriter(int n)
    {
        var writer = new NativeBufferWriter<byte>(n);
        Span<byte> span = writer.GetSpan(n)[..n];
        span.Fill(0x5A);
        writer.Advance(n);
        return span;
    }
}
