using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Pins of the I/O adapters' memory, attacked as a hostile user would (public API only): a pin is the
/// pointer a socket or native call works on, so whatever frees or moves the memory under it must be
/// refused until the pin ends, and one party's pin must not be ended by another's.
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
}
