using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Pins of the I/O adapters' memory, attacked as a hostile user would (public API only): a pin is the
/// pointer a socket or native call works on, so whatever frees or moves the memory under it must be
/// refused until the pin ends, and one party's pin must not be ended by another's. Also a writer's pin
/// dropped with the writer or resurrected after its finalizer, and a writer's memory pinned under the
/// arena's destroy or past the ledger's count.
/// In-process tests (leak-checked) of the I/O family, for the failure classes arena reset under use and
/// lifetime misuse; the child-process scenarios of those classes are in <see cref="ArenaResetTests"/>
/// and <see cref="LifetimeMisuseTests"/>.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class IoPinAttackTests : LeakCheckedTest
{
    [Fact]
    public void An_arena_reset_is_refused_while_a_writer_s_memory_is_pinned_and_while_the_writer_that_handed_it_out_lives()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena, initialCapacity: 4096);
        Memory<byte> memory = writer.GetMemory(100);
        MemoryHandle pin = memory.Pin();

        Assert.Throws<InvalidOperationException>(arena.Reset);
        memory.Span[0] = 9;
        writer.Advance(1);

        pin.Dispose();
        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal(9, memory.Span[0]);
        writer.Dispose();
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
        Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => writer.GetSpan());
    }

    [Fact]
    public void An_arena_reset_is_refused_while_a_pinned_sequence_segment_of_a_writer_is_pinned()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena);
        writer.GetSpan(64).Fill(7);
        writer.Advance(64);
        ReadOnlyMemory<byte> written = writer.WrittenSequence.First;
        using (written.Pin())
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.False(written.Span.ContainsAnyExcept((byte)7));
        }

        // Unpinned, the block is still the writer's, whose span went out: the reset waits for its dispose.
        Assert.Throws<InvalidOperationException>(arena.Reset);
        writer.Dispose();
        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => written.Span.Length);
    }

    [Fact]
    public void A_writer_memory_handle_disposed_twice_through_a_copy_does_not_end_another_party_s_pin()
    {
        using var writer = new NativeBufferWriter<byte>(1024);
        Memory<byte> memory = writer.GetMemory(16);
        MemoryHandle first = memory.Pin();
        MemoryHandle copy = first;
        using MemoryHandle second = memory.Pin();

        first.Dispose();
        // The copy is the same pin: disposing it again must not end the second party's pin.
        copy.Dispose();

        Assert.Throws<InvalidOperationException>(() => writer.GetSpan(1 << 20));
        Assert.Throws<InvalidOperationException>(writer.Dispose);
        Assert.Equal(16, memory.Span[..16].Length);
    }

    [Fact]
    public void A_pool_memory_handle_disposed_twice_through_a_copy_does_not_end_another_party_s_pin()
    {
        using var pool = new JemMemoryPool(maxCachedBytes: 0);
        long live = AllocationLedger.LiveCount;
        IMemoryOwner<byte> owner = pool.Rent(256);
        Memory<byte> memory = owner.Memory;
        MemoryHandle first = memory.Pin();
        MemoryHandle copy = first;
        MemoryHandle second = memory.Pin();

        first.Dispose();
        copy.Dispose();
        owner.Dispose();

        // The second pin still holds the memory: it is freed by that pin's end, not before.
        Assert.Equal(live + 1, AllocationLedger.LiveCount);
        second.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_writer_s_pin_dropped_with_the_writer_does_not_hold_off_the_arena_s_reset_which_frees_the_block_the_finalizer_left_allocated()
    {
        // The pool's finalizer ends the pins nobody can end any more so that the arena can be reset
        // (IoPoolAttackTests.A_pin_dropped_with_its_owner_...); the writer's must not do less. The
        // block itself stays allocated: the dropped pin's pointer may still be in native hands.
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var arena = new JemArena();
        PinAndDropWriter(arena);
        Finalization.CollectAndFinalize();
        Assert.Equal(live + 1, AllocationLedger.LiveCount);

        Exception? reset = Record.Exception(arena.Reset);
        Exception? destroy = Record.Exception(arena.Dispose);
        Assert.Null(reset);
        Assert.Null(destroy);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_writer_and_its_pin_resurrected_after_the_writer_s_finalizer_refuse_every_use_and_the_pin_s_dispose_ends_nothing()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        using var arena = new JemArena();
        WriterResurrector.Drop(arena);
        Finalization.CollectAndFinalize();
        (NativeBufferWriter<byte> writer, MemoryHandle pin, Memory<byte> memory) = WriterResurrector.TakeResurrected();

        Assert.Throws<ObjectDisposedException>(() => writer.GetSpan(1));
        Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => memory.Pin());
        writer.Dispose();
        pin.Dispose();
        pin.Dispose();

        // The finalizer ended the pin and the late dispose ended nothing more: no acquisition is left
        // to refuse the reset, and none was released twice (that would have thrown above).
        Assert.Equal(live + 1, AllocationLedger.LiveCount);
        arena.Reset();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_writer_s_pinned_memory_refuses_the_arena_s_destroy_and_so_does_the_writer_that_handed_it_out_until_it_is_disposed()
    {
        var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena, initialCapacity: 1000);
        Memory<byte> memory = writer.GetMemory(100);
        MemoryHandle pin = memory.Pin();

        Assert.Throws<InvalidOperationException>(arena.Dispose);
        memory.Span.Fill(3);
        pin.Dispose();
        // The memory's spans may still be read: the writer holds the block until it is disposed.
        InvalidOperationException refused = Assert.Throws<InvalidOperationException>(arena.Dispose);
        Assert.Contains("NativeBufferWriter", refused.Message);
        Assert.False(arena.IsDisposed);
        Assert.False(memory.Span.ContainsAnyExcept((byte)3));

        writer.Dispose();
        arena.Dispose();
        Assert.True(arena.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => writer.GetSpan());
    }

    [Fact]
    public void A_writer_s_memory_pinned_past_the_ledger_s_count_refuses_the_next_pin_and_the_writer_disposes_after_the_last_unpin()
    {
        var writer = new NativeBufferWriter<byte>(64);
        Memory<byte> memory = writer.GetMemory(8);
        var pins = new List<MemoryHandle>();
        InvalidOperationException? refused = null;
        while (pins.Count < 70_000)
        {
            try
            {
                pins.Add(memory.Pin());
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                refused = e;
                break;
            }
        }

        Assert.NotNull(refused);
        Assert.Throws<InvalidOperationException>(writer.Dispose);
        pins.ForEach(pin => pin.Dispose());
        writer.Dispose();
        Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void PinAndDropWriter(JemArena? arena)
    {
        // As a caller that starts a native write on a writer's memory and loses the handle (a bug):
        // the writer, its memory and the pin all become unreachable together.
        var writer = arena is null ? new NativeBufferWriter<byte>(64 << 10) : new NativeBufferWriter<byte>(arena, 64 << 10);
        writer.GetSpan(100).Fill(1);
        writer.Advance(100);
        _ = writer.GetMemory(1000).Pin();
    }

    private sealed class WriterResurrector(NativeBufferWriter<byte> writer, MemoryHandle pin, Memory<byte> memory)
    {
        private static NativeBufferWriter<byte>? s_writer;
        private static MemoryHandle s_pin;
        private static Memory<byte> s_memory;

        ~WriterResurrector()
        {
            s_pin = pin;
            s_memory = memory;
            Volatile.Write(ref s_writer, writer);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void Drop(JemArena arena)
        {
            var writer = new NativeBufferWriter<byte>(arena, 64 << 10);
            Memory<byte> memory = writer.GetMemory(1000);
            _ = new WriterResurrector(writer, memory.Pin(), memory);
        }

        internal static (NativeBufferWriter<byte> Writer, MemoryHandle Pin, Memory<byte> Memory) TakeResurrected()
        {
            NativeBufferWriter<byte>? writer = Interlocked.Exchange(ref s_writer, null);
            Assert.NotNull(writer);
            (MemoryHandle pin, Memory<byte> memory) = (s_pin, s_memory);
            (s_pin, s_memory) = (default, default);
            return (writer, pin, memory);
        }
    }
}
