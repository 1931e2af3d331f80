using System.Runtime.CompilerServices;
using jemalloc.Interop;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterArenaTests : LeakCheckedTest
{
    [Fact]
    public void Growth_in_an_arena_is_charged_to_its_budget_by_size_class_and_refunded_by_dispose()
    {
        using var arena = new JemArena(budgetBytes: 1 << 20);
        var writer = new NativeBufferWriter<byte>(arena, initialCapacity: 1000);
        Assert.Equal(SizeClass(1000), arena.UsedBytes);
        for (int i = 0; i < 300; i++)
        {
            writer.GetSpan(1000).Fill((byte)i);
            writer.Advance(1000);
        }

        Assert.Equal(300_000, writer.WrittenCount);
        // The block, and the old blocks its growths kept (a span was handed out before each), charged
        // by size class until the writer is disposed: with the doubling, less than the block again.
        Assert.InRange(arena.UsedBytes, SizeClass((nuint)writer.Capacity), 2 * SizeClass((nuint)writer.Capacity));
        writer.Dispose();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void A_growth_past_the_arena_budget_throws_ArenaBudgetExceededException_and_leaves_the_writer_and_books_unchanged()
    {
        using var arena = new JemArena(budgetBytes: 64 << 10);
        using var writer = new NativeBufferWriter<byte>(arena);
        writer.GetSpan(40_000).Fill(3);
        writer.Advance(30_000);
        long capacity = writer.Capacity;
        long used = arena.UsedBytes;

        Assert.Throws<ArenaBudgetExceededException>(() => writer.GetSpan(100_000));
        Assert.Equal(capacity, writer.Capacity);
        Assert.Equal(used, arena.UsedBytes);
        Assert.Equal(30_000, writer.WrittenCount);
        Assert.False(writer.WrittenSpan.ContainsAnyExcept((byte)3));

        // The writer stays usable in the room it has.
        writer.GetSpan((int)(capacity - 30_000)).Fill(4);
        writer.Advance((int)(capacity - 30_000));
        Assert.Equal(capacity, writer.WrittenCount);
        Assert.Equal(used, arena.UsedBytes);
    }

    [Fact]
    public void When_doubling_would_pass_the_budget_the_writer_grows_to_just_what_is_needed()
    {
        using var arena = new JemArena(budgetBytes: 64 << 10);
        using var writer = new NativeBufferWriter<byte>(arena, initialCapacity: 40_000);
        // Through a stream, which hands no span out: the growth resizes the block instead of keeping it.
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            stream.Write(Enumerable.Repeat((byte)5, 30_000).ToArray());
            stream.Write(Enumerable.Repeat((byte)5, 20_000).ToArray());
        }

        Assert.Equal(50_000, writer.Capacity);
        Assert.Equal(SizeClass(50_000), arena.UsedBytes);
        Assert.False(writer.WrittenSpan.ContainsAnyExcept((byte)5));
    }

    [Fact]
    public void A_reset_of_the_arena_frees_a_writer_only_a_stream_wrote_through_and_both_then_throw_ObjectDisposedException()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena, 64);
        using var stream = new NativeMemoryStream(writer);
        stream.Write([1, 2, 3]);

        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
        SaysWentWithArena(Assert.Throws<ObjectDisposedException>(() => writer.GetSpan()));
        SaysWentWithArena(Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount));
        SaysWentWithArena(Assert.Throws<ObjectDisposedException>(() => writer.WrittenSequence));
        SaysWentWithArena(Assert.Throws<ObjectDisposedException>(() => stream.Length));
        SaysWentWithArena(Assert.Throws<ObjectDisposedException>(() => stream.Read(new byte[3])));
        Assert.False(stream.CanRead);
        writer.Dispose();
        writer.Dispose();
        // Now it was disposed, and says that instead.
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.GetSpan());
    }

    // The writer was not disposed: the reset freed its block under it.
    private static void SaysWentWithArena(ObjectDisposedException e)
    {
        Assert.Equal("NativeBufferWriter", e.ObjectName);
        Assert.StartsWith("This NativeBufferWriter was made in a JemArena that was reset or disposed since, which freed its memory", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_writer_that_handed_out_a_span_holds_its_block_so_the_arena_refuses_to_reset_until_the_writer_is_disposed()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<int>(arena, initialCapacity: 100);
        Span<int> span = writer.GetSpan(10);
        span.Fill(41);
        writer.Advance(10);
        long used = arena.UsedBytes;

        // Before the hold, the reset freed the block under the span, and the arena's next allocation
        // got it: the span then read and wrote that allocation's memory.
        InvalidOperationException refused = Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Contains("NativeBufferWriter", refused.Message);
        Assert.Contains("Dispose the writer", refused.Message);
        Assert.Equal(used, arena.UsedBytes);
        using (HugeArray<int> next = arena.CreateHugeArray<int>(100))
        {
            next.Fill(-1);
            Assert.False(span.ContainsAnyExcept(41));
        }

        // The writer goes on as if nothing was asked.
        writer.GetSpan(1)[0] = 42;
        writer.Advance(1);
        Assert.Equal(11, writer.WrittenCount);
        Assert.Equal(1, Assert.Single(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter).AcquireCount);

        writer.Dispose();
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void A_read_of_the_written_elements_on_another_thread_holds_the_block_too()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena);
        // Through a stream: no span goes out, so nothing is held yet.
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            stream.Write([5, 6, 7]);
        }

        Assert.Equal(0, Assert.Single(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter).AcquireCount);
        byte[] read = [];
        Workers.Run(1, _ => read = writer.WrittenSpan.ToArray());
        Assert.Equal([5, 6, 7], read);

        Assert.Throws<InvalidOperationException>(arena.Reset);
        writer.Dispose();
        arena.Reset();
    }

    [Fact]
    public void The_blocks_a_growth_kept_for_spans_handed_out_stay_held_with_the_writer_and_go_with_its_dispose()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<long>(arena, initialCapacity: 16);
        Span<long> first = writer.GetSpan(16);
        first.Fill(7);
        writer.Advance(16);
        Span<long> second = writer.GetSpan(1000);
        second[..1000].Fill(8);
        writer.Advance(1000);
        _ = writer.GetSpan(100_000);

        // Three blocks (the first two kept by growths), each held once.
        AllocationInfo[] blocks = AllocationLedger.Snapshot().Where(i => i.Kind == AllocationKind.BufferWriter).ToArray();
        Assert.Equal(3, blocks.Length);
        Assert.All(blocks, b => Assert.Equal(1, b.AcquireCount));
        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.False(first.ContainsAnyExcept(7));
        Assert.False(second[..1000].ContainsAnyExcept(8));

        writer.Dispose();
        Assert.DoesNotContain(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter);
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void A_hand_over_ends_the_writer_s_holds_and_the_new_array_is_not_acquired()
    {
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<int>(arena, initialCapacity: 8);
        writer.GetSpan(8).Fill(3);
        writer.Advance(8);
        writer.GetSpan(100).Fill(4);
        writer.Advance(100);

        using SafeArray<int> array = writer.DetachToSafeArray();
        Assert.Equal(108, array.Length);
        Assert.Equal(4, array[107]);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == array.Pointer);
        Assert.Equal(0, info.AcquireCount);
        Assert.DoesNotContain(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter);

        // The writer starts again; its new block is held once a span of it goes out.
        writer.GetSpan(1)[0] = 1;
        writer.Advance(1);
        Assert.Throws<InvalidOperationException>(arena.Reset);
    }

    [Fact]
    public void A_writer_dropped_without_dispose_after_handing_out_spans_keeps_its_blocks_for_them_until_the_arena_resets()
    {
        LeavesLeaksToTheFinalizer();
        using var arena = new JemArena();
        DropWriterAfterHandingOutSpans(arena);
        Finalization.CollectAndFinalize();

        // Both blocks (the first kept by the growth) stay for the spans, no longer held: the arena may reset.
        AllocationInfo[] left = AllocationLedger.Snapshot().Where(i => i.Kind == AllocationKind.BufferWriter).ToArray();
        Assert.Equal(2, left.Length);
        Assert.All(left, b => Assert.Equal(0, b.AcquireCount));
        Assert.True(arena.UsedBytes > 10_000);
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
        Assert.DoesNotContain(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter);
    }

    [Fact]
    public void A_writer_dropped_without_dispose_that_handed_nothing_out_is_freed_by_its_finalizer()
    {
        LeavesLeaksToTheFinalizer();
        using var arena = new JemArena();
        DropWriterWrittenOnlyThroughAStream(arena);
        Finalization.CollectAndFinalize();

        Assert.DoesNotContain(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter);
        Assert.Equal(0, arena.UsedBytes);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropWriterWrittenOnlyThroughAStream(JemArena arena)
    {
        var writer = new NativeBufferWriter<byte>(arena, 64);
        var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.Write(new byte[5000]);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropWriterAfterHandingOutSpans(JemArena arena)
    {
        var writer = new NativeBufferWriter<byte>(arena, 64);
        writer.GetSpan(64).Fill(1);
        writer.Advance(64);
        writer.GetSpan(10_000).Fill(2);
        writer.Advance(10_000);
    }

    [Fact]
    public void An_array_detached_from_an_arena_writer_is_told_by_the_arena_s_reset()
    {
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<long>(arena);
        for (long i = 0; i < 1000; i++)
        {
            writer.GetSpan(1)[0] = i;
            writer.Advance(1);
        }

        HugeArray<long> array = writer.DetachToHugeArray();
        Assert.Equal(999, array[999]);
        Assert.Equal(SizeClass(8000), arena.UsedBytes);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == array.Pointer);
        Assert.Equal(AllocationKind.HugeBuffer, info.Kind);

        arena.Reset();
        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        array.Dispose();
    }

    [Fact]
    public void The_arena_constructor_checks_its_arguments()
    {
        Assert.Throws<ArgumentNullException>(() => new NativeBufferWriter<byte>(null!));
        using var arena = new JemArena();
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(arena, -1));
        var destroyed = new JemArena();
        destroyed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeBufferWriter<byte>(destroyed));
        using var budgeted = new JemArena(budgetBytes: 4096);
        Assert.Throws<ArenaBudgetExceededException>(() => new NativeBufferWriter<byte>(budgeted, 1 << 20));
        Assert.Equal(0, budgeted.UsedBytes);
    }

    private static long SizeClass(nuint bytes) => (long)JemNative.Nallocx(bytes, 0);
}
