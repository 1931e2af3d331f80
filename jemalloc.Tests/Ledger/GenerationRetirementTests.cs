using jemalloc.Ledger;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// A slot's generation is 32 bits: if it could wrap, a handle kept since the slot's first use would
/// one day match again and reach whatever lives there then. The ledger retires a slot before that.
/// Counting 2^32 reuses would take minutes, so the slot is moved to the end of its life directly.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class GenerationRetirementTests : LeakCheckedTest
{
    private const string Owner = "test allocation";

    [Fact]
    public void A_slot_at_its_last_generation_is_retired_and_never_handed_out_again()
    {
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle first);
        int slot = first.Slot;

        // Age the live slot to the last odd generation below the retirement mark, as if it had been reused ~2^31 times.
        uint lastLive = SlotState.LastGeneration - 1;
        ref HotSlot hot = ref SlotTable.HotOf(slot);
        Volatile.Write(ref hot.State, SlotState.Make(lastLive));
        Volatile.Write(ref hot.Key, SlotState.MakeKey(lastLive));
        var aged = new AllocationHandle(slot, lastLive);
        Assert.False(first.IsValid);
        Assert.True(aged.IsValid);

        AllocationLedger.Free(aged, Owner);

        Assert.False(aged.IsValid);
        Assert.False(first.IsValid);
        Assert.Equal(SlotState.LastGeneration, SlotState.Generation(Volatile.Read(ref hot.State)));

        // The slot is out of the free stack for good: no later allocation gets it.
        var handles = new List<AllocationHandle>();
        try
        {
            for (int i = 0; i < 1000; i++)
            {
                AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle next);
                handles.Add(next);
                Assert.NotEqual(slot, next.Slot);
            }
        }
        finally
        {
            foreach (AllocationHandle handle in handles)
            {
                AllocationLedger.Free(handle, Owner);
            }
        }

        Assert.False(aged.IsValid);
        Assert.False(first.IsValid);
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(aged, Owner));
    }

    [Fact]
    public void A_handle_with_the_wrong_generation_is_invalid_whatever_the_slot_holds()
    {
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle live);
        try
        {
            // Every other generation, odd or even, near or far, must fail the one-compare check.
            foreach (uint generation in new uint[] { 0, 1, live.Generation - 2, live.Generation + 2, live.Generation ^ 0x8000_0000, uint.MaxValue })
            {
                var other = new AllocationHandle(live.Slot, generation);
                Assert.False(other.IsValid);
                Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Acquire(other, Owner));
            }

            Assert.True(live.IsValid);
        }
        finally
        {
            AllocationLedger.Free(live, Owner);
        }
    }
}
