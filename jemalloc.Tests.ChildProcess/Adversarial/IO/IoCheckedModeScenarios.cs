using System.Buffers;
using System.Runtime.CompilerServices;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: checked mode's detection for the I/O adapters (run with <c>JEMALLOC_NET_CHECKED=1</c>):
/// the spans the <see cref="IBufferWriter{T}"/> and <see cref="IMemoryOwner{T}"/> contracts leave to the
/// user (used after a dispose, or after a writer's growth), which checked mode must catch: they read
/// poison and their writes are reported. A dropped pool owner's span stays intact until the pool's
/// dispose; a stream written with a span or checked memory of its own block never copies from the block
/// its own growth freed.
/// </summary>
internal static class IoCheckedModeScenarios
{
    internal const string CheckedWriterGrowth = "checked-writer-growth";
    internal const string CheckedPoolDroppedOwnerSpan = "checked-pool-dropped-owner-span";
    internal const string CheckedWriterSpanAfterDispose = "checked-writer-span-after-dispose";
    internal const string CheckedPoolSpanAfterDispose = "checked-pool-span-after-dispose";
    internal const string CheckedStreamWriteOfItsOwnBlock = "checked-stream-write-of-its-own-block";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[CheckedWriterGrowth] = WriterGrowth;
        all[CheckedPoolDroppedOwnerSpan] = PoolDroppedOwnerSpan;
        all[CheckedWriterSpanAfterDispose] = WriterSpanAfterDispose;
        all[CheckedPoolSpanAfterDispose] = PoolSpanAfterDispose;
        all[CheckedStreamWriteOfItsOwnBlock] = StreamWriteOfItsOwnBlock;
    }

    /// <summary>
    /// A NativeBufferWriter's growth after a span went out keeps the old block (a stale snapshot, as
    /// ArrayBufferWriter's old array): a span from before the growth still reads the data it showed,
    /// and nothing of the writer is quarantined while it lives. Its Dispose frees the old block as a
    /// free does in checked mode, poisoned and quarantined: the span then reads poison, and a write
    /// through it is reported; the grown block held the data.
    /// </summary>
    private static void WriterGrowth()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        var reports = new List<UseAfterFreeEventArgs>();
        AllocationLedger.UseAfterFreeDetected += (_, e) => { lock (reports) { reports.Add(e); } };
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        const int n = 4096;
        var writer = new NativeBufferWriter<byte>(n);
        Span<byte> stale = writer.GetSpan(n)[..n];
        stale.Fill(0x5A);
        writer.Advance(n);
        long quarantined = AllocationLedger.QuarantinedBytes;

        writer.GetSpan(n);
        Check.True(writer.Capacity > n, "the writer grew");
        Check.Equal(0L, CountNot(writer.WrittenSpan, (byte)0x5A), "the grown block holds the written data");
        Check.Equal(0L, CountNot(stale, (byte)0x5A), "a span from before the growth reads the data it showed (the old block is kept)");
        Check.Equal(quarantined, AllocationLedger.QuarantinedBytes, "nothing of the live writer is in the quarantine");

        writer.Dispose();
        Check.Equal(0L, CountNot(stale, (byte)0xDB), "after the writer's dispose, a span from before the growth reads poison");
        Check.True(AllocationLedger.QuarantinedBytes >= quarantined + n, "the dispose quarantined the old block");
        stale[10] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "the write through the old block is counted");
        lock (reports)
        {
            Check.Equal(1, reports.Count, "the write through the old block raised UseAfterFreeDetected");
            if (reports.Count == 1)
            {
                Check.Equal(10L, reports[0].Offset, "reported offset of the stale write");
                Check.Equal((nuint)n, reports[0].Size, "reported size: the old block's");
                Check.Equal(AllocationKind.BufferWriter, reports[0].Kind, "reported kind");
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
        Check.Equal(0L, CountNot(span, (byte)0x5A), "a set-aside block is neither poisoned nor reused");
        pool.Dispose();
        Check.Equal(0L, CountNot(span, (byte)0xDB), "the pool's dispose freed and poisoned the set-aside block");
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

        Check.Equal(0L, CountNot(stale, (byte)0xDB), "a span used after the writer's dispose reads poison");
        stale[100] = 1;
        AllocationLedger.FlushQuarantine();
        Check.Equal(before + 1, AllocationLedger.UseAfterFreeWritesDetected, "a write through a span after the writer's dispose is reported");
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

        Check.Equal(0L, CountNot(stale, (byte)0xDB), "a pool block's span used after its owner's dispose reads poison");
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
        Check.Equal(0L, CountNot(nextSpan, (byte)0xDB), "the block rented in checked mode reads poison after its owner's dispose");
        pool.Trim();
        Check.Equal(0L, pool.GetStatistics().CachedCount, "the trim freed the block kept before");
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
}
