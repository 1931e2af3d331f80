using Apache.Arrow;

namespace jemalloc.Arrow.Tests;

/// <summary>Arrow's buffers allocated through the library: counted in the arena, held to its budget, freed when Arrow disposes them.</summary>
public sealed unsafe class AllocatorTests
{
    [Fact]
    public void Arrow_buffers_from_the_allocator_live_in_the_arena_and_are_freed_with_the_array()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        var builder = new DoubleArray.Builder();
        for (int i = 0; i < 100_000; i++)
        {
            builder.Append(i);
        }

        DoubleArray array = builder.Build(allocator);
        Assert.True(arena.UsedBytes >= 100_000 * sizeof(double), $"the arena holds {arena.UsedBytes:N0} bytes");
        using (System.Buffers.MemoryHandle pin = array.ValueBuffer.Memory.Pin())
        {
            Assert.Equal(0, (nint)pin.Pointer % 64);
        }

        Assert.Equal(99_999.0, array.GetValue(99_999));
        array.Dispose();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void An_arena_budget_refuses_a_buffer_past_it()
    {
        using var arena = new JemArena(budgetBytes: 1 << 20);
        var allocator = new JemallocArrowAllocator(arena.Options);
        Assert.Throws<ArenaBudgetExceededException>(() => allocator.Allocate(4 << 20));
        using System.Buffers.IMemoryOwner<byte> small = allocator.Allocate(1000);
        Assert.Equal(1000, small.Memory.Length);
        Assert.True(arena.UsedBytes > 0);
    }

    [Fact]
    public void A_negative_length_is_refused_and_an_empty_block_leaves_nothing_behind()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        Assert.Throws<ArgumentOutOfRangeException>(() => allocator.Allocate(-1));
        System.Buffers.IMemoryOwner<byte> empty = allocator.Allocate(0);
        Assert.Equal(0, empty.Memory.Length);
        empty.Dispose();
        empty.Dispose();
        Assert.Equal(0, arena.UsedBytes);
        arena.Reset();
    }
}
