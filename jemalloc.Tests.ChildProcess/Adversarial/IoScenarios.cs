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
        all["io-pool-pin-vs-dispose"] = PoolPinVsDispose;
        all["checked-writer-span-after-dispose"] = WriterSpanAfterDispose;
        all["checked-writer-span-after-finalizer"] = WriterSpanAfterFinalizer;
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
                while (true)
                {
                    try
                    {
                        writer.Dispose();
                        disposes++;
                        break;
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        refused++;
                        Thread.Yield();
                    }
                }
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
                    stream.Position = 0;
                    stream.Write(pattern);
                    stream.Position = 0;
                    byte[] back = new byte[pattern.Length];
                    stream.ReadExactly(back);
                    if (!back.AsSpan().SequenceEqual(pattern))
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
                while (true)
                {
                    try
                    {
                        arena.Reset();
                        resets++;
                        break;
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        refused++;
                        Thread.Yield();
                    }
                }
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
                    stream.Position = 0;
                    stream.Write(pattern);
                    stream.Position = 0;
                    byte[] back = new byte[pattern.Length];
                    stream.ReadExactly(back);
                    if (!back.AsSpan().SequenceEqual(pattern))
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
    /// A span from a writer that is then dropped: the finalizer frees the block while the span is in
    /// use (as any <see cref="IBufferWriter{T}"/>'s span would dangle once its writer is gone); in
    /// checked mode the span reads poison and a write through it is reported.
    /// </summary>
    private static void WriterSpanAfterFinalizer()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        Span<byte> stale = SpanOfDroppedWriter(4096);
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Check.Equal(0L, RaceScenarios.CountNot(stale, (byte)0xDB), "a span of a finalized writer reads poison");
        stale[7] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "a write through a span of a finalized writer is reported");
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
