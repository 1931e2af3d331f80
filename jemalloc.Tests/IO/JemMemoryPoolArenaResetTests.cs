using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A rented <see cref="JemMemoryPool"/> block in an arena holds back the arena's reset and destruction:
/// a span taken from its owner cannot be checked, so freeing the block under it would let the span
/// write into whatever the arena allocates next. The refusal names the rented blocks.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class JemMemoryPoolArenaResetTests : LeakCheckedTest
{
    [Fact]
    public void A_reset_while_blocks_are_rented_throws_naming_them_and_leaves_their_memory_to_the_owners()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        IMemoryOwner<byte> first = pool.Rent(4096);
        IMemoryOwner<byte> second = pool.Rent(1024);
        first.Memory.Span.Fill(0x5A);

        var refusal = Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.IsNotType<ObjectDisposedException>(refusal);
        Assert.Contains("2 JemMemoryPool block(s)", refusal.Message, StringComparison.Ordinal);
        Assert.Contains($"{4096 + 1024:N0} bytes", refusal.Message, StringComparison.Ordinal);
        Assert.Contains("rented", refusal.Message, StringComparison.Ordinal);
        Assert.Contains($"arena {arena.Index}", refusal.Message, StringComparison.Ordinal);

        // Nothing was reset: the owners' memory is theirs, and a new array in the arena does not get it.
        using (var array = new SafeArray<byte>(4096, 0x77, arena.Options))
        {
            first.Memory.Span.Fill(0x33);
            Assert.All(array.ToArray(), b => Assert.Equal(0x77, b));
        }

        Assert.All(first.Memory.ToArray(), b => Assert.Equal(0x33, b));

        first.Dispose();
        refusal = Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Contains("1 JemMemoryPool block(s)", refusal.Message, StringComparison.Ordinal);
        second.Dispose();
        arena.Reset();
        Assert.Equal(0L, arena.UsedBytes);
        Assert.Equal(0, pool.GetStatistics().CachedCount);
    }

    [Fact]
    public void A_rented_block_refuses_the_arena_s_dispose_too()
    {
        var arena = new JemArena();
        var pool = new JemMemoryPool(arena: arena);
        IMemoryOwner<byte> owner = pool.Rent(512);
        Assert.Throws<InvalidOperationException>(arena.Dispose);
        Assert.False(arena.IsDisposed);
        owner.Memory.Span.Fill(1);
        owner.Dispose();
        pool.Dispose();
        arena.Dispose();
        Assert.True(arena.IsDisposed);
    }

    [Fact]
    public void A_kept_block_handed_to_a_new_rent_refuses_the_reset_again_and_a_reset_between_rents_frees_the_kept_blocks()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena, clearBlocks: true);
        pool.Rent(2048).Dispose();
        Assert.Equal(1, pool.GetStatistics().CachedCount);

        // Handed to a new rent, the kept block is held by it.
        using (IMemoryOwner<byte> owner = pool.Rent(2048))
        {
            Assert.Equal(0, pool.GetStatistics().CachedCount);
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.All(owner.Memory.ToArray(), b => Assert.Equal(0, b));
        }

        Assert.Equal(1, pool.GetStatistics().CachedCount);
        arena.Reset();
        Assert.Equal(0, pool.GetStatistics().CachedCount);
        using IMemoryOwner<byte> fresh = pool.Rent(2048);
        fresh.Memory.Span.Fill(9);
        Assert.Throws<InvalidOperationException>(arena.Reset);
    }

    [Fact]
    public void An_owner_disposed_while_pinned_holds_the_reset_back_until_its_last_unpin()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        IMemoryOwner<byte> owner = pool.Rent(4096);
        MemoryHandle pin = owner.Memory.Pin();
        owner.Dispose();
        Assert.Throws<InvalidOperationException>(arena.Reset);
        pin.Dispose();
        arena.Reset();
        Assert.Equal(0L, arena.UsedBytes);
    }

    [Fact]
    public void An_owner_dropped_without_dispose_stops_holding_the_reset_back_once_finalized()
    {
        LeavesLeaksToTheFinalizer();
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        RentSeeTheResetRefusedAndDrop(pool, arena);
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        arena.Reset();
        Assert.Equal(0L, arena.UsedBytes);
        Assert.Equal(0L, pool.GetStatistics().OutstandingBytes);

        [MethodImpl(MethodImplOptions.NoInlining)]
        // The owner is kept alive until the refusal is seen (a collection started by a test running
        // beside this one could otherwise finalize it first), then dropped without Dispose on return.
        static void RentSeeTheResetRefusedAndDrop(JemMemoryPool pool, JemArena arena)
        {
            IMemoryOwner<byte> owner = pool.Rent(4096);
            owner.Memory.Span.Fill(1);
            Assert.Throws<InvalidOperationException>(arena.Reset);
            GC.KeepAlive(owner);
        }
    }

    [Fact]
    public void A_block_of_an_arena_pool_refuses_the_pin_past_the_most_it_counts_with_the_pool_s_message()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        IMemoryOwner<byte> owner = pool.Rent(64);
        var pins = new List<MemoryHandle>();
        InvalidOperationException? refusal = null;
        while (refusal is null)
        {
            try
            {
                pins.Add(owner.Memory.Pin());
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                refusal = e;
            }

            Assert.True(pins.Count < 40_000, "the pin count has no limit: it would wrap");
        }

        // The rent holds one of the ledger's 32,767 acquisitions.
        Assert.Equal(0x7FFE, pins.Count);
        Assert.Contains($"pinned {0x7FFE} times", refusal.Message, StringComparison.Ordinal);
        owner.Dispose();
        Assert.Throws<InvalidOperationException>(arena.Reset);
        pins.ForEach(pin => pin.Dispose());
        arena.Reset();
    }

    [Fact]
    public void A_pool_outside_any_arena_is_not_touched_by_an_arena_s_reset()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> owner = pool.Rent(4096);
        owner.Memory.Span.Fill(4);
        arena.Reset();
        Assert.All(owner.Memory.ToArray(), b => Assert.Equal(4, b));
    }
}
