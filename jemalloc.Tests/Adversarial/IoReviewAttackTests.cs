using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// A hostile review of the I/O adapters (<see cref="JemMemoryPool"/>, <see cref="NativeBufferWriter{T}"/>,
/// <see cref="NativeMemoryStream"/>) through their public API only, for what the other Io*AttackTests
/// leave out: a stream written with its own memory, pins dropped with their writer, a pool dropped
/// with its dropped owners, destinations that move or dispose the source under a synchronous copy.
/// Each test asserts the promise: a conventional exception, never freed or foreign memory, a hang or a leak.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class IoReviewAttackTests : LeakCheckedTest
{
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
    public void A_pool_dropped_with_its_dropped_owners_frees_its_kept_blocks_and_leaves_theirs_to_the_arena_s_reset()
    {
        // A span of a dropped owner's block may still be in use (a span keeps nothing alive), so a
        // finalized pool frees only the blocks it kept; an arena reset frees the others.
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var arena = new JemArena();
        DropPoolAndOwners(arena);
        Finalization.CollectAndFinalize();
        Assert.Equal(live + 4, AllocationLedger.LiveCount);

        arena.Reset();
        Assert.Equal(live, AllocationLedger.LiveCount);
        arena.Dispose();
    }

    [Fact]
    public void A_stream_write_of_a_buffer_lying_partly_inside_its_own_block_is_refused_before_the_block_grows()
    {
        using var writer = new NativeBufferWriter<byte>(256);
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.Write(new byte[256]);
        byte[] expected = writer.WrittenSpan.ToArray();

        // Only unsafe code makes such a span: its last 16 bytes lie inside the block, the rest before it.
        ArgumentException refused = Assert.Throws<ArgumentException>(() =>
        {
            ref byte first = ref MemoryMarshal.GetReference(writer.WrittenSpan);
            stream.Write(MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Subtract(ref first, 48), 64));
        });

        Assert.Equal("buffer", refused.ParamName);
        Assert.Equal(256L, writer.Capacity);
        Assert.Equal(expected, writer.WrittenSpan.ToArray());
        Assert.Equal(256L, stream.Position);
    }

    [Fact]
    public void A_synchronous_CopyTo_whose_destination_disposes_the_leave_open_source_stops_with_ObjectDisposedException()
    {
        using var writer = new NativeBufferWriter<byte>();
        var source = new NativeMemoryStream(writer, leaveOpen: true);
        source.Write(Enumerable.Range(0, 100).Select(i => (byte)i).ToArray());
        source.Position = 0;
        var destination = new CallbackStream(() => source.Dispose());

        // After Dispose "every member throws ObjectDisposedException": the copy must not go on
        // reading the disposed stream (CopyToAsync's next Read does throw).
        Exception? copy = Record.Exception(() => source.CopyTo(destination, 10));
        Assert.True(copy is ObjectDisposedException && destination.Received.Count == 1, $"the copy {(copy is null ? "returned normally" : $"threw {copy.GetType().Name}")} after writing {destination.Received.Count} chunks of the disposed stream");
    }

    [Fact]
    public void A_synchronous_CopyTo_whose_destination_moves_the_source_position_to_the_end_of_long_leaves_a_valid_position()
    {
        using var source = new NativeMemoryStream();
        source.Write(new byte[100]);
        source.Position = 0;
        var destination = new CallbackStream(() => source.Position = NativeMemoryStream.MaxLength - 5);

        Exception? copy = Record.Exception(() => source.CopyTo(destination, 10));

        // Whatever the copy did, a stream's position is never negative.
        long position = source.Position;
        Exception? read = Record.Exception(() => source.Read(new byte[10]));
        Exception? readByte = Record.Exception(() => source.ReadByte());
        Assert.True(position >= 0, $"the position is {position} after the copy ({copy?.GetType().Name ?? "no exception"}); then Read throws {read?.GetType().Name}: {read?.Message} and ReadByte throws {readByte?.GetType().Name}: {readByte?.Message}");
        Assert.Equal(-1, source.ReadByte());
    }

    [Fact]
    public void An_arena_reset_or_destroy_from_a_synchronous_CopyTo_s_destination_is_refused_and_the_copy_reads_the_bytes_written()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<byte>(arena);
        using var source = new NativeMemoryStream(writer);
        byte[] data = Enumerable.Range(0, 200).Select(i => (byte)i).ToArray();
        source.Write(data);
        source.Position = 0;
        var destination = new CallbackStream(() =>
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.Throws<InvalidOperationException>(arena.Dispose);
        });

        source.CopyTo(destination, 50);
        Assert.Equal(data, destination.Written);
        Assert.False(arena.IsDisposed);
    }

    [Fact]
    public void A_writer_whose_arena_was_destroyed_never_allocates_in_a_new_arena_that_took_the_same_index()
    {
        long live = AllocationLedger.LiveCount;
        var first = new JemArena();
        using var writer = new NativeBufferWriter<byte>(first);
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        first.Dispose();
        using var second = new JemArena();

        Assert.Throws<ObjectDisposedException>(() => writer.GetSpan(100));
        Assert.Throws<ObjectDisposedException>(() => writer.GetMemory(5 << 20));
        Assert.Throws<ObjectDisposedException>(() => stream.Write(new byte[10]));
        Assert.Throws<ObjectDisposedException>(() => stream.SetLength(10));
        Assert.Equal(0, second.UsedBytes);
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropPoolAndOwners(JemArena arena)
    {
        var pool = new JemMemoryPool(arena: arena);
        for (int i = 0; i < 4; i++)
        {
            pool.Rent(8192).Memory.Span.Fill(1);
        }

        pool.Rent(4096).Dispose();
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

/// <summary>The review's races and checked-mode cases, each in a child process (see IoReviewScenarios there).</summary>
[Collection(AdversarialScenarios.Name)]
public sealed class IoReviewScenarioTests
{
    [Fact]
    public void In_checked_mode_a_stream_written_with_a_span_or_checked_memory_of_its_own_block_never_copies_from_the_block_its_growth_freed() =>
        AdversarialChild.AssertClean("review-checked-stream-write-of-its-own-block", checkedMode: true);

    [Fact]
    public void A_pool_s_trim_and_statistics_racing_pinned_rents_and_its_arena_s_destroy_keep_blocks_apart_and_balance_the_books() =>
        AdversarialChild.AssertClean("review-pool-trim-stats-vs-rents-pins-and-arena-destroy");

    [Fact]
    public void A_writer_whose_pins_end_on_another_thread_refuses_growth_while_pinned_and_frees_its_block_once_they_ended() =>
        AdversarialChild.AssertClean("review-writer-pins-ended-on-another-thread");
}
