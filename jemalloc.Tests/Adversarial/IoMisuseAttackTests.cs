using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The I/O adapters (<see cref="NativeMemoryStream"/>, <see cref="NativeBufferWriter{T}"/>,
/// <see cref="JemMemoryPool"/>) attacked through their public API with absurd sizes, stale copies,
/// re-entrant callbacks (copy destinations that grow, dispose, detach, move or reset the source), a
/// stream written with its own memory, hand-overs under open streams, a writer whose arena was destroyed
/// and dropped owners: each misuse throws the conventional exception and leaves the object as it was, or
/// behaves as documented.
/// In-process tests (leak-checked) of the I/O family, for the failure classes bad input, re-entrancy and
/// lifetime misuse; the child-process scenarios of those classes are in <see cref="BadInputTests"/>,
/// <see cref="ReentrancyTests"/> and <see cref="LifetimeMisuseTests"/>.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class IoMisuseAttackTests : LeakCheckedTest
{
    [Fact]
    public void Absurd_lengths_and_positions_on_a_growable_stream_throw_and_leave_it_unchanged()
    {
        using var stream = new NativeMemoryStream();
        stream.Write([1, 2, 3]);
        long capacity = stream.Capacity;

        // Past the longest a stream can be: what MemoryStream throws past its own (issue 21).
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(long.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(NativeMemoryStream.MaxLength + 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(long.MinValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Position = long.MaxValue);
        stream.Position = NativeMemoryStream.MaxLength - 1;
        Assert.Throws<OutOfMemoryException>(() => stream.WriteByte(9));
        stream.Position = NativeMemoryStream.MaxLength;
        Assert.Throws<IOException>(() => stream.WriteByte(9));
        Assert.Equal(0, stream.Read(new byte[10]));
        Assert.Equal(-1, stream.ReadByte());
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Seek(1, SeekOrigin.Current));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Position = long.MinValue);
        Assert.Throws<IOException>(() => stream.Seek(long.MinValue, SeekOrigin.End));
        Assert.Throws<ArgumentException>(() => stream.Seek(0, (SeekOrigin)42));

        Assert.Equal(NativeMemoryStream.MaxLength, stream.Position);
        Assert.Equal(3, stream.Length);
        Assert.Equal(capacity, stream.Capacity);
        Assert.Equal(new byte[] { 1, 2, 3 }, stream.ToArray());
        stream.Position = 3;
        stream.WriteByte(4);
        Assert.Equal(new byte[] { 1, 2, 3, 4 }, stream.ToArray());
    }

    [Fact]
    public void Absurd_lengths_on_an_array_stream_are_NotSupported_and_bad_read_arguments_are_argument_errors()
    {
        using var array = new SafeArray<byte>(16);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(long.MaxValue));
        Assert.Throws<NotSupportedException>(() => stream.SetLength(NativeMemoryStream.MaxLength));
        stream.Position = NativeMemoryStream.MaxLength - 1;
        Assert.Throws<NotSupportedException>(() => stream.WriteByte(1));
        stream.Position = 0;

        byte[] buffer = new byte[8];
        Assert.Throws<ArgumentNullException>(() => stream.Read(null!, 0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Read(buffer, -1, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Read(buffer, 0, -1));
        Assert.ThrowsAny<ArgumentException>(() => stream.Read(buffer, 4, 5));
        Assert.ThrowsAny<ArgumentException>(() => stream.Read(buffer, int.MaxValue, int.MaxValue));
        Assert.ThrowsAny<ArgumentException>(() => stream.Write(buffer, 8, 1));
        Assert.ThrowsAny<ArgumentException>(() => { _ = stream.ReadAsync(buffer, 1, 8, CancellationToken.None); });
        Assert.ThrowsAny<ArgumentException>(() => { _ = stream.WriteAsync(buffer, -1, 1, CancellationToken.None); });
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.CopyTo(Stream.Null, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = stream.CopyToAsync(Stream.Null, -1); });
        Assert.Equal(0, stream.Position);
        Assert.Equal(16, stream.Length);
    }

    [Fact]
    public void A_writer_asked_for_an_absurd_size_throws_and_stays_usable()
    {
        using var writer = new NativeBufferWriter<Block64>();
        writer.GetSpan(3).Fill(new Block64 { First = 5 });
        writer.Advance(3);
        long capacity = writer.Capacity;

        // int.MaxValue elements of 64 bytes: 128 GiB, more than the machine has.
        Assert.Throws<OutOfMemoryException>(() => writer.GetSpan(int.MaxValue));
        Assert.Throws<OutOfMemoryException>(() => writer.GetMemory(int.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetSpan(int.MinValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.Advance(int.MinValue));
        Assert.Throws<InvalidOperationException>(() => writer.Advance(int.MaxValue));
        Assert.Throws<OverflowException>(() => new NativeBufferWriter<Block64>(long.MaxValue));

        Assert.Equal(capacity, writer.Capacity);
        Assert.Equal(3, writer.WrittenCount);
        writer.GetSpan(1)[0] = new Block64 { First = 6 };
        writer.Advance(1);
        Assert.Equal([5L, 5, 5, 6], writer.WrittenSpan.ToArray().Select(b => b.First));
    }

    [Fact]
    public void A_writer_in_an_arena_whose_budget_refuses_the_first_block_stays_empty_and_usable()
    {
        using var arena = new JemArena(budgetBytes: 16 << 10);
        using var writer = new NativeBufferWriter<byte>(arena);
        Assert.Throws<ArenaBudgetExceededException>(() => writer.GetSpan(64 << 10));
        Assert.Equal(0, writer.Capacity);
        Assert.Equal(0, arena.UsedBytes);
        Assert.Throws<ArenaBudgetExceededException>(() => new NativeBufferWriter<byte>(arena, 1 << 20));
        Assert.Equal(0, arena.UsedBytes);

        writer.GetSpan(100).Fill(1);
        writer.Advance(100);
        Assert.Equal(100, writer.WrittenCount);
        Assert.True(arena.UsedBytes > 0);
    }

    [Fact]
    public void A_stream_s_CopyTo_into_a_destination_that_grows_the_source_is_refused_and_reads_no_moved_memory()
    {
        using var source = new NativeMemoryStream(64);
        byte[] data = Enumerable.Range(0, 64).Select(i => (byte)i).ToArray();
        source.Write(data);
        source.Position = 0;
        var destination = new CallbackStream(chunk =>
        {
            // Grow the very block the chunk is a span of: the growth must be refused, not move it.
            long position = source.Position;
            source.Position = source.Length;
            Assert.Throws<InvalidOperationException>(() => source.Write(new byte[1 << 20]));
            source.Position = position;
        });

        source.CopyTo(destination, 16);

        Assert.Equal(data, destination.Written);
        Assert.Equal(64, source.Length);
    }

    [Fact]
    public void A_stream_s_CopyTo_into_a_destination_that_disposes_the_source_writer_is_refused()
    {
        var writer = new NativeBufferWriter<byte>();
        using var source = new NativeMemoryStream(writer);
        source.Write(new byte[100]);
        source.Position = 0;
        var destination = new CallbackStream(chunk =>
        {
            Assert.Throws<InvalidOperationException>(writer.Dispose);
        });

        source.CopyTo(destination, 10);
        Assert.Equal(10, destination.Received.Count);
        Assert.Equal(100, writer.WrittenCount);
    }

    [Theory]
    [InlineData(256)]
    [InlineData(100)]
    public void A_stream_s_CopyTo_into_a_destination_that_detaches_the_source_writer_is_refused(int written)
    {
        // 256 fills the writer's first block exactly: a full block needs no shrink, and its hand-over
        // must still see the stream's operation.
        var writer = new NativeBufferWriter<byte>(initialCapacity: 256);
        using var source = new NativeMemoryStream(writer);
        byte[] data = Enumerable.Range(0, written).Select(i => (byte)i).ToArray();
        source.Write(data);
        Assert.Equal(256, writer.Capacity);
        source.Position = 0;
        var destination = new CallbackStream(chunk =>
        {
            Assert.Throws<InvalidOperationException>(() => writer.DetachToHugeArray());
        });

        source.CopyTo(destination, 10);
        Assert.Equal(data, destination.Written);
        Assert.Equal(written, writer.WrittenCount);
        using HugeArray<byte> detached = writer.DetachToHugeArray();
        Assert.Equal(data, detached.ToArray());
    }

    [Fact]
    public async Task CopyToAsync_whose_destination_disposes_the_source_writer_between_chunks_faults_with_ObjectDisposedException()
    {
        var writer = new NativeBufferWriter<byte>();
        using var source = new NativeMemoryStream(writer);
        source.Write(Enumerable.Repeat((byte)7, 100).ToArray());
        source.Position = 0;
        var destination = new CallbackStream(chunk =>
        {
            // No lease is held while the destination's write is awaited: the dispose is allowed.
            writer.Dispose();
        });

        await Assert.ThrowsAsync<ObjectDisposedException>(() => source.CopyToAsync(destination, 10));
        Assert.Single(destination.Received);
        Assert.All(destination.Received[0], b => Assert.Equal(7, b));
        Assert.Throws<ObjectDisposedException>(() => source.Length);
    }

    [Fact]
    public void Detaching_a_writer_under_an_open_stream_empties_the_stream_and_the_stream_keeps_working_on_a_new_block()
    {
        using var writer = new NativeBufferWriter<byte>();
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.Write([1, 2, 3, 4]);
        ReadOnlySequence<byte> stale = writer.WrittenSequence;

        using HugeArray<byte> array = writer.DetachToHugeArray();

        Assert.Equal(0, stream.Length);
        Assert.Equal(4, stream.Position);
        Assert.Equal(0, stream.Read(new byte[4]));
        Assert.Throws<InvalidOperationException>(() => stale.First.Span.Length);
        stream.WriteByte(9);
        Assert.Equal(new byte[] { 0, 0, 0, 0, 9 }, stream.ToArray());
        Assert.Equal([1, 2, 3, 4], array.ToArray());
    }

    [Fact]
    public void Stale_memories_and_sequences_throw_after_a_hand_over_a_dispose_and_an_arena_reset()
    {
        using var arena = new JemArena();
        var writer = new NativeBufferWriter<int>(arena);
        writer.GetSpan(10).Fill(1);
        writer.Advance(10);
        Memory<int> free = writer.GetMemory(5);
        ReadOnlySequence<int> written = writer.WrittenSequence;
        using (SafeArray<int> array = writer.DetachToSafeArray())
        {
            Assert.Throws<InvalidOperationException>(() => free.Span.Length);
            Assert.Throws<InvalidOperationException>(() => written.First.Pin());
            Assert.Equal(10, array.Length);
        }

        writer.GetSpan(3).Fill(2);
        writer.Advance(3);
        written = writer.WrittenSequence;
        // The writer's span went out: the arena refuses to reset until the writer is disposed.
        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal([2, 2, 2], written.ToArray());
        writer.Dispose();
        Assert.Throws<ObjectDisposedException>(() => written.First.Span.Length);
        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => written.ToArray());
    }

    [Fact]
    public void A_writer_or_stream_dropped_without_dispose_after_a_hand_over_leaves_the_detached_array_alive()
    {
        LeavesLeaksToTheFinalizer();
        SafeArray<byte> array = DetachFromDroppedWriter();
        HugeArray<byte> huge = DetachFromDroppedStream();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.True(array.IsValid);
        Assert.Equal(Enumerable.Range(0, 300).Select(i => (byte)i), array.ToArray());
        Assert.True(huge.IsValid);
        Assert.Equal(3, huge.Length);
        array.Dispose();
        huge.Dispose();
    }

    [Fact]
    public void A_pool_block_dropped_without_dispose_gives_its_bytes_back_to_the_budget_once_collected_and_its_block_is_set_aside_until_the_pool_s_dispose()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveBytes;
        var pool = new JemMemoryPool(budgetBytes: 10_000);
        Span<byte> stale = RentAndDrop(pool, 8_000);
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(0, stats.OutstandingBytes);
        Assert.Equal((1, 8192), (stats.SetAsideCount, stats.SetAsideBytes));
        Assert.Equal(0, stats.CachedCount);

        // A span of the dropped owner is still in use here: its block went to no other rent.
        using (IMemoryOwner<byte> owner = pool.Rent(8_000))
        {
            Assert.Equal(8192, owner.Memory.Length);
            owner.Memory.Span.Fill(2);
        }

        Assert.Equal(8192, stale.Length);
        Assert.True(stale.IndexOfAnyExcept((byte)1) < 0, "the span of the dropped owner was reused");
        pool.Dispose();
        Assert.Equal((0, 0), (pool.GetStatistics().SetAsideCount, pool.GetStatistics().SetAsideBytes));
        Assert.Equal(live, AllocationLedger.LiveBytes);
    }

    [Fact]
    public void A_direct_unpin_through_a_pool_block_s_manager_is_refused_and_the_pin_holds_the_block_until_its_handle_is_disposed()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena, maxCachedBytes: 0);
        long live = AllocationLedger.LiveCount;
        IMemoryOwner<byte> owner = pool.Rent(64);
        Memory<byte> memory = owner.Memory;
        Assert.True(MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(memory, out MemoryManager<byte>? manager));
        MemoryHandle pin = memory.Pin();
        MemoryHandle copy = pin;

        // As a hostile party would try to end a pin it does not own (a socket's, say): it ends none.
        var refusal = Assert.Throws<InvalidOperationException>(manager!.Unpin);
        Assert.Contains("MemoryHandle", refusal.Message);
        Assert.Throws<InvalidOperationException>(manager.Unpin);
        Assert.Throws<InvalidOperationException>(arena.Reset);
        owner.Dispose();
        Assert.Equal(live + 1, AllocationLedger.LiveCount);
        unsafe
        {
            *(byte*)pin.Pointer = 3;
            Assert.Equal(3, *(byte*)copy.Pointer);
        }

        pin.Dispose();
        copy.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);
        Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
        arena.Reset();
    }

    [Fact]
    public void A_pool_rent_refused_by_its_budget_its_arena_s_budget_or_a_destroyed_arena_leaves_the_books_unchanged()
    {
        var arena = new JemArena(budgetBytes: 64 << 10);
        using var pool = new JemMemoryPool(arena: arena, budgetBytes: 1 << 20);
        using IMemoryOwner<byte> kept = pool.Rent(1000);
        JemMemoryPoolStatistics before = pool.GetStatistics();

        Assert.Throws<MemoryPoolBudgetExceededException>(() => pool.Rent(int.MaxValue));
        Assert.Throws<ArenaBudgetExceededException>(() => pool.Rent(512 << 10));
        Assert.Equal(before, pool.GetStatistics());

        kept.Dispose();
        arena.Dispose();
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(10));
        Assert.Equal(0, pool.GetStatistics().OutstandingBytes);
        Assert.Equal(1, pool.GetStatistics().ReturnCount);
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static SafeArray<byte> DetachFromDroppedWriter()
    {
        var writer = new NativeBufferWriter<byte>();
        for (int i = 0; i < 300; i++)
        {
            writer.GetSpan(1)[0] = (byte)i;
            writer.Advance(1);
        }

        _ = writer.GetMemory(10);
        return writer.DetachToSafeArray();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static HugeArray<byte> DetachFromDroppedStream()
    {
        var writer = new NativeBufferWriter<byte>();
        var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.Write([1, 2, 3]);
        return writer.DetachToHugeArray();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Span<byte> RentAndDrop(JemMemoryPool pool, int size)
    {
        // As a caller that keeps using a span of an owner it dropped: a span keeps nothing alive.
        Span<byte> span = pool.Rent(size).Memory.Span;
        span.Fill(1);
        return span;
    }

    [StructLayout(LayoutKind.Sequential, Size = 64)]
    private struct Block64
    {
        public long First;
    }
}
