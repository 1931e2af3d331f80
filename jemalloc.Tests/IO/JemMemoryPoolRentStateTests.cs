using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.IO;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A rent's owner is a small object with no finalizer: its state lives in the block, under the rent's
/// number. An owner dropped without Dispose is found by the pool's sweep once a collection has
/// cleared it, and a block is freed before its rent number could come round to a stale owner's.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class JemMemoryPoolRentStateTests : LeakCheckedTest
{
    [Fact]
    public void A_rent_s_owner_has_no_finalizer()
    {
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> owner = pool.Rent(4096);
        // A finalizable object per rent costs several times the rest of a rent; the sweep replaces it.
        Assert.Null(owner.GetType().GetMethod("Finalize", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.DeclaredOnly));
        Assert.IsType<PooledBlock>(owner);
    }

    [Fact]
    public void An_owner_dropped_without_dispose_gives_its_budget_back_after_a_collection_without_waiting_for_finalizers()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var pool = new JemMemoryPool(budgetBytes: 4096);
        RentAndDrop(pool);

        // The rent that would pass the budget sweeps first, finalizers or not: the collection cleared the dropped owner.
        GC.Collect();
        using (IMemoryOwner<byte> next = pool.Rent(4096))
        {
            next.Memory.Span.Fill(3);
            Assert.False(next.Memory.Span.ContainsAnyExcept((byte)3));
        }

        // The rent above is what must not wait; the books are read once the sweep that the collection
        // started on the finalizer thread (which may have claimed the owner first) has set its block aside.
        GC.WaitForPendingFinalizers();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((2, 2, 1, 0L), (stats.RentCount, stats.ReturnCount, stats.SetAsideCount, stats.OutstandingBytes));
        pool.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void RentAndDrop(JemMemoryPool pool) => pool.Rent(4096).Memory.Span.Fill(1);
    }

    [Fact]
    public void A_block_whose_rent_number_is_spent_is_freed_on_return_and_its_stale_owner_never_matches_a_later_rent()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        long before = AllocationLedger.LiveBytes;
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> first = pool.Rent(4096);
        PooledBlockAllocation block = ((PooledBlock)first).Block;
        first.Dispose();
        Assert.Equal(1, pool.GetStatistics().CachedCount);

        // As if the block had been rented ~2^32 times: its next rent is its last.
        Volatile.Write(ref block.State, unchecked((long)((ulong)(PooledBlockAllocation.LastRent - 1) << 32)) | PooledBlockAllocation.Disposed);
        IMemoryOwner<byte> last = pool.Rent(4096);
        Assert.Same(block, ((PooledBlock)last).Block);
        Memory<byte> stale = last.Memory;
        last.Dispose();

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((0, 2, 2), (stats.CachedCount, stats.RentCount, stats.ReturnCount));
        Assert.Equal(before, AllocationLedger.LiveBytes);
        Assert.False(block.LedgerBlock.IsLive);

        using IMemoryOwner<byte> next = pool.Rent(4096);
        Assert.NotSame(block, ((PooledBlock)next).Block);
        Assert.Throws<ObjectDisposedException>(() => stale.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => first.Memory);
        next.Memory.Span.Fill(9);
        Assert.False(next.Memory.Span.ContainsAnyExcept((byte)9));
    }
}
