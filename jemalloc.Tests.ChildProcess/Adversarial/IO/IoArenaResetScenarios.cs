using System.Buffers;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;
using static jemalloc.Tests.ChildProcess.Adversarial.IoDisposeRaceScenarios;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: an arena reset or destroy under the I/O adapters in use: a reset while a stream grows
/// a writer in the arena, racing a writer's spans, under a clearing pool's rent, under a rented pool
/// block's span; a pool's Trim and statistics racing rents, pins and the arena's destroy. The reset is
/// refused or the adapter throws ObjectDisposedException; no span ever reaches a structure made after it.
/// </summary>
internal static class IoArenaResetScenarios
{
    internal const string IoArenaResetVsStream = "io-arena-reset-vs-stream";
    internal const string IoArenaResetVsWriterSpans = "io-arena-reset-vs-writer-spans";
    internal const string IoPoolClearVsArenaReset = "io-pool-clear-vs-arena-reset";
    internal const string ArenaPoolSpanVsReset = "arena-pool-span-vs-reset";
    internal const string IoPoolTrimStatsVsRentsPinsAndArenaDestroy = "io-pool-trim-stats-vs-rents-pins-and-arena-destroy";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[IoArenaResetVsStream] = ArenaResetVsStream;
        all[IoArenaResetVsWriterSpans] = ArenaResetVsWriterSpans;
        all[IoPoolClearVsArenaReset] = PoolClearVsArenaReset;
        all[ArenaPoolSpanVsReset] = PoolSpanVsReset;
        all[IoPoolTrimStatsVsRentsPinsAndArenaDestroy] = PoolTrimStatsVsRentsPinsAndArenaDestroy;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    private static NativeMemoryStream? s_stream;
    private const byte Old = 0x5A;
    private const byte VictimByte = 0x77;

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
    /// A <see cref="JemMemoryPool"/> in an arena: a reset while a block is rented is refused with an
    /// <see cref="InvalidOperationException"/> that names the rent, and the owner's span stays its own.
    /// Then one thread rents and writes through spans (as a pipe does), while another resets the arena
    /// and at once fills new arrays in it with a sentinel: no span write ever lands in an array.
    /// </summary>
    private static void PoolSpanVsReset()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        IMemoryOwner<byte> owner = pool.Rent(4096);
        Span<byte> span = owner.Memory.Span;
        span.Fill(Old);
        InvalidOperationException? refusal = null;
        try
        {
            arena.Reset();
        }
        catch (InvalidOperationException e)
        {
            refusal = e;
        }

        Check.Caught<InvalidOperationException>("a reset while a pool block is rented", refusal);
        Check.True(refusal?.Message.Contains("1 JemMemoryPool block(s)", StringComparison.Ordinal) == true && refusal.Message.Contains("rented", StringComparison.Ordinal), "the refusal names the rented block", refusal?.Message ?? "none");
        using (var array = new SafeArray<byte>(4096, VictimByte, arena.Options))
        {
            span.Fill(0x33);
            Check.Equal(0L, CountNot(array.ToArray(), VictimByte), "a span of the rented block did not reach an array made after the refused reset");
        }

        Check.Equal(0L, CountNot(owner.Memory.Span, (byte)0x33), "the owner still reads its own writes");
        owner.Dispose();
        Check.NoThrow("the reset runs once the owner is disposed", arena.Reset);

        long rents = 0, resets = 0, refused = 0, spanWrites = 0;
        long[] counts = Check.RaceUntil("pool spans vs arena reset", Budget, firstBodyAtLeast: 300, int.MaxValue,
            i =>
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

                using var array = new SafeArray<byte>(4096, VictimByte, arena.Options);
                Thread.SpinWait(200);
                long bad = CountNot(array.ToArray(), VictimByte);
                if (bad != 0)
                {
                    Check.Fail("pool spans vs arena reset", $"iteration {i}: {bad} bytes of an array made after a reset were overwritten through a pool block's span");
                }
            },
            i =>
            {
                IMemoryOwner<byte> rented = pool.Rent(4096);
                rents++;
                Span<byte> held = rented.Memory.Span;
                for (int k = 0; k < 20; k++)
                {
                    held.Fill((byte)(k + 1));
                    spanWrites++;
                    Thread.SpinWait(20);
                }

                rented.Dispose();
            });
        Check.Info($"INFO rents={rents} span-writes={spanWrites} resets={resets} refused={refused}");
        Check.True(counts[0] > 0 && counts[1] > 0 && rents > 0 && spanWrites > 0, "both sides ran", $"reset loops={counts[0]} rents={rents}");
        Check.True(refused > 0, "resets met rented blocks and were refused", "no reset was ever refused: the race did not happen");
        Check.True(resets > 0, "resets between the rents ran", "no reset ever ran");
    }

    /// <summary>
    /// Two threads rent blocks of an arena pool, pin each, fill it with their own byte and check it;
    /// a third trims the pool and checks its statistics; a fourth destroys the arena at some point.
    /// Every call completes or throws <see cref="ObjectDisposedException"/> (or is refused with
    /// <see cref="InvalidOperationException"/> while pinned), no block ever holds another rent's byte,
    /// the statistics never show more returns than rents, and at the end the books balance and the
    /// ledger holds nothing.
    /// </summary>
    private static void PoolTrimStatsVsRentsPinsAndArenaDestroy()
    {
        long live = AllocationLedger.LiveCount;
        long destroyedWhileRunning = 0, refusedDestroys = 0, disposedRents = 0, rents = 0;
        for (int round = 0; round < 60; round++)
        {
            var arena = new JemArena();
            var pool = new JemMemoryPool(arena: arena, maxCachedBytes: 1 << 20);
            int spin = round * 7919 % 200_000;
            Check.Race("pool trim/stats vs rents, pins and arena destroy", TimeSpan.FromMilliseconds(300), 20_000,
                i => RentPinFillCheck(pool, 0x21, i, ref disposedRents, ref rents),
                i => RentPinFillCheck(pool, 0x42, i, ref disposedRents, ref rents),
                _ =>
                {
                    pool.Trim();
                    JemMemoryPoolStatistics stats = pool.GetStatistics();
                    if (stats.ReturnCount > stats.RentCount || stats.OutstandingBytes < 0 || stats.CachedBytes > pool.MaxCachedBytes || stats.CachedCount < 0)
                    {
                        Check.Fail("pool statistics", stats.ToString());
                    }
                },
                i =>
                {
                    if (i == 0)
                    {
                        Thread.SpinWait(spin);
                        refusedDestroys += Check.UntilNotRefused(arena.Dispose);
                        destroyedWhileRunning++;
                    }
                });
            if (!arena.IsDisposed)
            {
                arena.Dispose();
            }

            JemMemoryPoolStatistics end = pool.GetStatistics();
            Check.Equal(end.RentCount, end.ReturnCount, "every rent was returned once");
            Check.Equal(0L, end.OutstandingBytes, "no byte is outstanding");
            pool.Dispose();
            Check.Equal(live, AllocationLedger.LiveCount, "the destroyed arena and the disposed pool hold nothing");
        }

        Check.Info($"INFO destroyed={destroyedWhileRunning} refused-destroys={refusedDestroys} rents={rents} rents-or-uses-after-destroy={disposedRents}");

        static unsafe void RentPinFillCheck(JemMemoryPool pool, byte mine, int i, ref long disposed, ref long rents)
        {
            IMemoryOwner<byte> owner;
            try
            {
                owner = pool.Rent(64 << (i % 12));
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref disposed);
                return;
            }

            Interlocked.Increment(ref rents);
            try
            {
                Memory<byte> memory = owner.Memory;
                using MemoryHandle pin = memory.Pin();
                var span = new Span<byte>(pin.Pointer, memory.Length);
                span.Fill(mine);
                Thread.SpinWait(50);
                if (span.ContainsAnyExcept(mine))
                {
                    Check.Fail("a pinned block holds only its rent's byte", $"{CountNot(span, mine)} of {span.Length} bytes differ from 0x{mine:X2}");
                }
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref disposed);
            }
            finally
            {
                owner.Dispose();
            }
        }
    }
}
