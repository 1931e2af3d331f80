using System.Runtime.CompilerServices;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: lifetime misuse of the I/O adapters: a span of a <see cref="NativeBufferWriter{T}"/>
/// dropped without Dispose keeps its block (the finalizer must not free it) and never reaches a later
/// structure.
/// </summary>
internal static class IoLifetimeMisuseScenarios
{
    internal const string IoWriterSpanAfterFinalizer = "io-writer-span-after-finalizer";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[IoWriterSpanAfterFinalizer] = WriterSpanAfterFinalizer;
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

        Check.Equal(0L, CountNot(written, (byte)0x11), "a finalized writer's WrittenSpan keeps the bytes written");
        Check.Equal(0L, CountNot(free, (byte)0x5A), "a finalized writer's GetSpan keeps the bytes written");
        free.Fill(0x44);
        Check.True(made.TrueForAll(a => CountNot(a.ToArray(), a.Length == 4096 ? (byte)0x33 : (byte)0x22) == 0),
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
