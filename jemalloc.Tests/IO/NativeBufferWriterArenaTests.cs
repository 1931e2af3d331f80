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
    public void A_reset_of_the_arena_frees_the_block_and_the_writer_and_its_stream_then_throw_ObjectDisposedException()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<int>(arena, initialCapacity: 100);
        writer.GetSpan(10)[0] = 1;
        writer.Advance(10);
        using var stream = new NativeMemoryStream(new NativeBufferWriter<byte>(arena, 64));
        stream.Write([1, 2, 3]);

        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
        Assert.Throws<ObjectDisposedException>(() => writer.GetSpan());
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenSequence);
        Assert.Throws<ObjectDisposedException>(() => stream.Length);
        Assert.Throws<ObjectDisposedException>(() => stream.Read(new byte[3]));
        Assert.False(stream.CanRead);
        writer.Dispose();
        writer.Dispose();
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
