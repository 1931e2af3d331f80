using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// <see cref="MemoryHold"/>: a lease that lives in a field. It refuses the structure's dispose and its
/// arena's reset while held, is counted apart from <c>Acquire()</c> so no <c>Release()</c> ends it,
/// ends once however often it is disposed, and is ended by its finalizer when dropped.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class MemoryHoldTests : LeakCheckedTest
{
    [Fact]
    public void A_hold_refuses_dispose_until_it_ends_and_is_counted_with_the_leases()
    {
        var array = new SafeArray<int>(16, 4);
        MemoryHold hold = array.Hold();
        Assert.True(hold.IsHeld);
        Assert.Equal(1, array.Handle.LeaseCount);
        Assert.Equal(0, array.AcquireCount);
        Assert.Contains("lease", Assert.Throws<InvalidOperationException>(array.Dispose).Message, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(4, array[15]);

        hold.Dispose();
        Assert.False(hold.IsHeld);
        Assert.Equal(0, array.Handle.LeaseCount);
        array.Dispose();
        Assert.False(array.IsValid);
    }

    [Fact]
    public void No_Release_can_end_a_hold()
    {
        using var array = new HugeArray<long>(8);
        array.Acquire();
        using (MemoryHold hold = array.Hold())
        {
            array.Release();
            Assert.Throws<InvalidOperationException>(array.Release);
            Assert.Equal(1, array.Handle.LeaseCount);
            Assert.Throws<InvalidOperationException>(array.Dispose);
            Assert.True(hold.IsHeld);
        }

        Assert.Equal(0, array.Handle.LeaseCount);
    }

    [Fact]
    public void Disposing_a_hold_twice_ends_that_hold_only()
    {
        using var array = new SafeArray<byte>(8);
        MemoryHold first = array.Hold();
        MemoryHold second = array.Hold();
        first.Dispose();
        first.Dispose();
        Assert.Equal(1, array.Handle.LeaseCount);
        Assert.True(second.IsHeld);
        Assert.Throws<InvalidOperationException>(array.Dispose);
        second.Dispose();
        Assert.Equal(0, array.Handle.LeaseCount);
    }

    [Fact]
    public void A_hold_refuses_its_arenas_reset_and_the_memory_stays_readable()
    {
        using var arena = new JemArena();
        var array = new SafeArray<int>(1024, 9, arena.Options);
        using (array.Hold())
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.True(array.IsValid);
            Assert.Equal(9, array[1023]);
        }

        arena.Reset();
        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
    }

    [Fact]
    public void A_hold_on_a_disposed_structure_throws_ObjectDisposedException()
    {
        var array = new SafeArray<int>(4);
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(array.Hold);
    }

    [Fact]
    public void A_dropped_hold_is_ended_by_its_finalizer()
    {
        using var array = new SafeArray<int>(4);
        DropHold(array);
        Finalization.CollectAndFinalize();
        Assert.Equal(0, array.Handle.LeaseCount);
    }

    [Fact]
    public void A_dropped_structure_under_a_dropped_hold_is_freed_once_both_are_collected()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        DropStructureAndHold();
        Finalization.CollectAndFinalize();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void The_most_holds_a_structure_counts_is_refused_with_InvalidOperationException()
    {
        using var array = new SafeArray<int>(4);
        var holds = new List<MemoryHold>();
        try
        {
            while (holds.Count < short.MaxValue)
            {
                holds.Add(array.Hold());
            }

            Assert.Throws<InvalidOperationException>(array.Hold);
        }
        finally
        {
            holds.ForEach(hold => hold.Dispose());
        }

        Assert.Equal(0, array.Handle.LeaseCount);
    }

    [Fact]
    public void Querying_huge_pages_works_on_a_structure_acquired_the_most_times_and_leaves_its_counts_alone()
    {
        using var array = new SafeArray<long>(1 << 16);
        for (int i = 0; i < short.MaxValue; i++)
        {
            array.Acquire();
        }

        HugePageReport report = HugePageInfo.Query(array);
        Assert.Equal(array.Pointer, report.Address);
        Assert.Equal(short.MaxValue, array.AcquireCount);
        Assert.Equal(0, array.Handle.LeaseCount);
        for (int i = 0; i < short.MaxValue; i++)
        {
            array.Release();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropHold(SafeArray<int> array) => _ = array.Hold();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropStructureAndHold() => _ = new SafeArray<int>(4).Hold();
}
