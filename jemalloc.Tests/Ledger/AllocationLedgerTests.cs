using jemalloc.Interop;
using jemalloc.Memory;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

[Collection(LeakChecked.Name)]
public sealed unsafe class AllocationLedgerTests : LeakCheckedTest
{
    private const string Owner = "test allocation";

    [Fact]
    public void Allocation_is_recorded_with_size_kind_and_element_type_until_freed()
    {
        long liveCount = AllocationLedger.LiveCount;
        long liveBytes = AllocationLedger.LiveBytes;
        void* memory = AllocationLedger.Allocate(100, AllocationOptions.Default, AllocationKind.Raw, ElementTypes.IdOf<int>(), 0, null, out AllocationHandle handle);

        Assert.True(memory != null);
        Assert.True(handle.IsValid);
        Assert.Equal(0, handle.AcquireCount);
        Assert.Equal(liveCount + 1, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes + 100, AllocationLedger.LiveBytes);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == (nint)memory);
        Assert.Equal((nuint)100, info.Size);
        Assert.Equal(AllocationKind.Raw, info.Kind);
        Assert.Equal(typeof(int), info.ElementType);
        Assert.Null(info.Arena);
        Assert.Null(info.AllocatedAt);
        Assert.Equal((nint)memory, AllocationLedger.Describe(handle).Address);

        AllocationLedger.Free(handle, Owner);

        Assert.False(handle.IsValid);
        Assert.Equal(-1, handle.AcquireCount);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
        Assert.DoesNotContain(AllocationLedger.Snapshot(), i => i.Address == (nint)memory);
    }

    [Fact]
    public void Snapshot_shows_where_an_allocation_was_made_when_stack_traces_are_captured()
    {
        AllocationLedger.CaptureStackTraces = true;
        AllocationHandle handle;
        void* memory;
        try
        {
            memory = AllocationLedger.Allocate(8, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out handle);
        }
        finally
        {
            AllocationLedger.CaptureStackTraces = false;
        }

        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == (nint)memory);
        Assert.Contains(nameof(Snapshot_shows_where_an_allocation_was_made_when_stack_traces_are_captured), info.AllocatedAt, StringComparison.Ordinal);
        AllocationLedger.Free(handle, Owner);
    }

    [Fact]
    public void Acquired_allocation_cannot_be_freed_until_every_acquire_is_released()
    {
        AllocationLedger.Allocate(64, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle handle);
        AllocationLedger.Acquire(handle, Owner);
        AllocationLedger.Acquire(handle, Owner);
        Assert.Equal(2, handle.AcquireCount);
        Assert.Equal(2, Assert.Single(AllocationLedger.Snapshot(), i => i.Address == AllocationLedger.Describe(handle).Address).AcquireCount);

        var error = Assert.Throws<InvalidOperationException>(() => AllocationLedger.Free(handle, Owner));
        Assert.Contains("acquired 2 time(s)", error.Message, StringComparison.Ordinal);
        Assert.True(handle.IsValid);

        AllocationLedger.Release(handle, Owner);
        Assert.Throws<InvalidOperationException>(() => AllocationLedger.Free(handle, Owner));
        AllocationLedger.Release(handle, Owner);
        AllocationLedger.Free(handle, Owner);
        Assert.False(handle.IsValid);
    }

    [Fact]
    public void Releasing_more_than_acquired_throws_and_changes_nothing()
    {
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle handle);
        var error = Assert.Throws<InvalidOperationException>(() => AllocationLedger.Release(handle, Owner));
        Assert.IsNotType<ObjectDisposedException>(error);
        Assert.Equal(0, handle.AcquireCount);
        AllocationLedger.Free(handle, Owner);
    }

    [Fact]
    public void Every_operation_on_a_freed_allocation_throws_ObjectDisposedException()
    {
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle handle);
        AllocationLedger.Free(handle, Owner);

        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Acquire(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Release(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.ThrowIfInvalid(handle, Owner));
    }

    [Fact]
    public void Default_handle_is_never_valid()
    {
        AllocationHandle handle = default;
        Assert.False(handle.IsValid);
        Assert.Equal(-1, handle.AcquireCount);
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Acquire(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Release(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.ThrowIfInvalid(handle, Owner));
    }

    [Fact]
    public void A_reused_slot_does_not_revive_old_handles()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed slot back at once; checked mode quarantines it.
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle first);
        AllocationLedger.Free(first, Owner);
        // The free-slot stack hands the same slot back to the next allocation on this thread.
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle second);

        Assert.Equal(first.Slot, second.Slot);
        Assert.NotEqual(first, second);
        Assert.False(first.IsValid);
        Assert.True(second.IsValid);
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(first, Owner));
        Assert.True(second.IsValid);
        AllocationLedger.Free(second, Owner);
    }

    [Fact]
    public void Handles_are_equal_only_for_the_same_allocation()
    {
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle a);
        AllocationLedger.Allocate(16, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle b);
        AllocationHandle copy = a;

        Assert.True(a == copy);
        Assert.Equal(a.GetHashCode(), copy.GetHashCode());
        Assert.True(a != b);
        Assert.False(a.Equals((object)b));
        AllocationLedger.Free(a, Owner);
        AllocationLedger.Free(b, Owner);
    }

    [Fact]
    public void Allocation_fails_with_OutOfMemoryException_when_jemalloc_cannot_provide_the_memory()
    {
        long liveCount = AllocationLedger.LiveCount;
        var error = Assert.Throws<OutOfMemoryException>(() =>
            AllocationLedger.Allocate((nuint)1 << 60, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out _));
        Assert.Contains("1,152,921,504,606,846,976", error.Message, StringComparison.Ordinal);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Huge_page_request_aligns_large_allocations_to_2_MiB()
    {
        var options = new AllocationOptions(MallocxFlags.None, HugePages: true);
        void* large = AllocationLedger.Allocate(3 << 20, options, AllocationKind.Raw, 0, 0, null, out AllocationHandle largeHandle);
        void* small = AllocationLedger.Allocate(4096, options, AllocationKind.Raw, 0, 0, null, out AllocationHandle smallHandle);

        Assert.Equal(0, (long)large % (1 << 21));
        AllocationLedger.Free(largeHandle, Owner);
        AllocationLedger.Free(smallHandle, Owner);
        Assert.True(small != null);
    }

    [Fact]
    public void Retired_allocation_is_invalid_at_once_and_freed_later()
    {
        long liveBytes = AllocationLedger.LiveBytes;
        AllocationLedger.Allocate(32, AllocationOptions.Default, AllocationKind.SafeBuffer, 0, 0, null, out AllocationHandle handle);

        AllocationLedger.Acquire(handle, Owner);
        Assert.Throws<InvalidOperationException>(() => AllocationLedger.Retire(handle, Owner));
        AllocationLedger.Release(handle, Owner);

        Assert.True(AllocationLedger.Retire(handle, Owner));
        Assert.False(handle.IsValid);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
        Assert.False(AllocationLedger.Retire(handle, Owner));
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Acquire(handle, Owner));

        AllocationLedger.FreeOwned(handle);
        // A second FreeOwned finds nothing pending and must not free again.
        AllocationLedger.FreeOwned(handle);
    }

    [Fact]
    public void FreeOwned_leaves_an_acquired_or_leased_allocation_live_and_frees_it_once_neither()
    {
        long liveCount = AllocationLedger.LiveCount;
        AllocationLedger.Allocate(32, AllocationOptions.Default, AllocationKind.SafeBuffer, 0, 0, null, out AllocationHandle acquired);
        AllocationLedger.Acquire(acquired, Owner);

        // What a finalizer does for a dropped array: an Acquire() promised its pointer stays good, so
        // the memory stays (a leak the ledger shows, with its acquire count).
        AllocationLedger.FreeOwned(acquired);
        Assert.True(acquired.IsValid);
        Assert.Equal(1, acquired.AcquireCount);
        Assert.Equal(liveCount + 1, AllocationLedger.LiveCount);

        AllocationLedger.Allocate(32, AllocationOptions.Default, AllocationKind.SafeBuffer, 0, 0, null, out AllocationHandle leased);
        AllocationLedger.EnterLease(leased, Owner);

        // A lease that was never disposed may still have spans in use: the memory stays (a leak the ledger shows).
        AllocationLedger.FreeOwned(leased);
        Assert.True(leased.IsValid);
        Assert.Equal(liveCount + 2, AllocationLedger.LiveCount);

        AllocationLedger.ExitLease(leased);
        AllocationLedger.FreeOwned(leased);
        Assert.False(leased.IsValid);
        AllocationLedger.Release(acquired, Owner);
        AllocationLedger.FreeOwned(acquired);
        Assert.False(acquired.IsValid);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [Fact]
    public void InvalidateArena_invalidates_only_that_arena_and_refuses_while_one_is_acquired()
    {
        uint arena = TestArena.Create();
        try
        {
            var inArena = new AllocationOptions(MallocxFlags.Arena(arena) | MallocxFlags.NoThreadCache);
            void* a = AllocationLedger.Allocate(64, inArena, AllocationKind.Raw, 0, 0, null, out AllocationHandle handleA);
            void* b = AllocationLedger.Allocate(4096, inArena, AllocationKind.Raw, 0, 0, null, out AllocationHandle handleB);
            AllocationLedger.Allocate(64, AllocationOptions.Default, AllocationKind.Raw, 0, 0, null, out AllocationHandle elsewhere);
            Assert.Equal(arena, Assert.Single(AllocationLedger.Snapshot(), i => i.Address == (nint)a).Arena);

            AllocationLedger.Acquire(handleA, Owner);
            Assert.Throws<InvalidOperationException>(() => AllocationLedger.InvalidateArena(arena));
            Assert.True(handleA.IsValid);
            Assert.True(handleB.IsValid);
            AllocationLedger.Release(handleA, Owner);

            void* c = AllocationLedger.Allocate(64, inArena, AllocationKind.SafeBuffer, 0, 0, null, out AllocationHandle pending);
            Assert.True(AllocationLedger.Retire(pending, Owner));
            AllocationLedger.FreeOwned(pending);

            Assert.Equal(2, AllocationLedger.InvalidateArena(arena));

            Assert.False(handleA.IsValid);
            Assert.False(handleB.IsValid);
            Assert.True(elsewhere.IsValid);
            Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(handleA, Owner));
            // The ledger left the memory to the arena: give it back as an arena reset would.
            JemNative.Dallocx(a, inArena.Flags.Value);
            JemNative.Dallocx(b, inArena.Flags.Value);
            AllocationLedger.Free(elsewhere, Owner);
            Assert.True(c != null);
        }
        finally
        {
            TestArena.Destroy(arena);
        }
    }

    [Fact]
    public void Concurrent_allocate_acquire_release_free_leaves_the_ledger_as_it_was()
    {
        long liveCount = AllocationLedger.LiveCount;
        const int threads = 4;
        const int rounds = 2000;
        Workers.Run(threads, t =>
        {
            var handles = new List<AllocationHandle>();
            for (int i = 0; i < rounds; i++)
            {
                AllocationLedger.Allocate((nuint)(8 + (i % 64)), new AllocationOptions(MallocxFlags.NoThreadCache), AllocationKind.Raw, 0, 0, null, out AllocationHandle h);
                AllocationLedger.Acquire(h, Owner);
                handles.Add(h);
                if (i % 3 == 0)
                {
                    foreach (AllocationHandle held in handles)
                    {
                        AllocationLedger.Release(held, Owner);
                        AllocationLedger.Free(held, Owner);
                    }

                    handles.Clear();
                }
            }

            foreach (AllocationHandle held in handles)
            {
                AllocationLedger.Release(held, Owner);
                AllocationLedger.Free(held, Owner);
            }
        });

        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }
}
