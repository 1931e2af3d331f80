using System.Buffers;
using System.Collections.Concurrent;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// A hostile review of the I/O adapters, for what IoScenarios leaves out: a stream written with a
/// span or checked memory of its own block (checked mode shows whether the write read the block its
/// own growth freed), a pool's Trim and statistics racing rents, pins and its arena's destroy, and a
/// writer whose pins end on another thread (as a socket's completion would) while it writes.
/// </summary>
internal static class IoReviewScenarios
{
    internal static void Register(Dictionary<string, Action> all)
    {
        all["review-checked-stream-write-of-its-own-block"] = StreamWriteOfItsOwnBlock;
        all["review-pool-trim-stats-vs-rents-pins-and-arena-destroy"] = PoolTrimStatsVsRentsPinsAndArenaDestroy;
        all["review-writer-pins-ended-on-another-thread"] = WriterPinsEndedOnAnotherThread;
    }

    /// <summary>
    /// A growable stream is written with its own written bytes (as <c>MemoryStream.Write(ms.GetBuffer(), ...)</c>
    /// may be): a span from <see cref="NativeBufferWriter{T}.WrittenSpan"/>, then the checked memory
    /// of <see cref="NativeBufferWriter{T}.WrittenSequence"/> through <c>WriteAsync</c>. The write must
    /// either be refused or append the same bytes; it must never copy from the block its own growth freed
    /// (in checked mode that block reads 0xDB).
    /// </summary>
    private static void StreamWriteOfItsOwnBlock()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        byte[] pattern = Enumerable.Range(0, 256).Select(i => (byte)(i | 1)).ToArray();

        // A span of the written bytes, passed straight to the stream's Write.
        using (var writer = new NativeBufferWriter<byte>(256))
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            stream.Write(pattern);
            Check.Equal(256L, writer.Capacity, "the block is full, so the next write grows it");
            Exception? caught = null;
            try
            {
                stream.Write(writer.WrittenSpan);
            }
            catch (Exception e)
            {
                caught = e;
            }

            CheckAppendedOrRefused("Write(writer.WrittenSpan)", stream, pattern, caught);
        }

        // The checked memory of WrittenSequence, which promises never to reach moved or freed memory.
        using (var writer = new NativeBufferWriter<byte>(256))
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            stream.Write(pattern);
            ReadOnlyMemory<byte> written = writer.WrittenSequence.First;
            Exception? caught = null;
            try
            {
                stream.WriteAsync(written).AsTask().GetAwaiter().GetResult();
            }
            catch (Exception e)
            {
                caught = e;
            }

            CheckAppendedOrRefused("WriteAsync(writer.WrittenSequence.First)", stream, pattern, caught);
        }
    }

    private static void CheckAppendedOrRefused(string what, NativeMemoryStream stream, byte[] pattern, Exception? caught)
    {
        byte[] contents = stream.ToArray();
        if (caught is not null)
        {
            Check.True(caught is InvalidOperationException, what, $"threw {caught.GetType().Name}: {caught.Message}");
            Check.Equal(256, contents.Length, $"{what} refused left the stream as it was");
            return;
        }

        Check.Equal(512, contents.Length, $"{what} appended 256 bytes");
        long poison = contents.Skip(256).Count(b => b == 0xDB);
        Check.True(contents.AsSpan(256).SequenceEqual(pattern), $"{what} appended the bytes it was given",
            $"the appended bytes differ from the span passed in: {poison} of 256 are 0xDB (checked mode's poison of freed memory); first 8: {Convert.ToHexString(contents, 256, 8)}");
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
                    Check.Fail("a pinned block holds only its rent's byte", $"{RaceScenarios.CountNot(span, mine)} of {span.Length} bytes differ from 0x{mine:X2}");
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

    /// <summary>
    /// The writer's thread takes memories, pins them and hands each pin to another thread, which ends
    /// it a little later (a socket's completion), while the writer's thread keeps writing and asking
    /// for more room: a growth while pinned is refused with <see cref="InvalidOperationException"/>,
    /// otherwise the writer grows; the bytes written read back, and once every pin has ended the
    /// writer disposes and the ledger holds nothing.
    /// </summary>
    private static void WriterPinsEndedOnAnotherThread()
    {
        long live = AllocationLedger.LiveCount;
        long refusedGrowths = 0, growths = 0, refusedDisposes = 0;
        for (int round = 0; round < 20; round++)
        {
            var writer = new NativeBufferWriter<byte>();
            var pins = new BlockingCollection<MemoryHandle>();
            long expected = 0;
            var unpinner = new Thread(() =>
            {
                foreach (MemoryHandle pin in pins.GetConsumingEnumerable())
                {
                    Thread.SpinWait(200);
                    pin.Dispose();
                }
            });
            unpinner.Start();
            for (int i = 0; i < 20_000; i++)
            {
                try
                {
                    Memory<byte> memory = writer.GetMemory(1 + (i % 3000));
                    MemoryHandle pin = memory.Pin();
                    memory.Span[0] = (byte)expected;
                    writer.Advance(1);
                    expected++;
                    pins.Add(pin);
                    growths++;
                }
                catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                {
                    refusedGrowths++;
                }
            }

            pins.CompleteAdding();
            ReadOnlySpan<byte> written = writer.WrittenSpan;
            for (int k = 0; k < written.Length; k++)
            {
                if (written[k] != (byte)k)
                {
                    Check.Fail("the bytes written through pinned memories read back", $"byte {k} is {written[k]}");
                    break;
                }
            }

            Check.Equal(expected, writer.WrittenCount, "every pinned write was advanced");
            refusedDisposes += Check.UntilNotRefused(writer.Dispose);
            unpinner.Join();
            Check.Equal(live, AllocationLedger.LiveCount, "the writer freed its block once every pin ended");
        }

        Check.Info($"INFO pinned-writes={growths} refused-growths={refusedGrowths} refused-disposes={refusedDisposes}");
    }
}
