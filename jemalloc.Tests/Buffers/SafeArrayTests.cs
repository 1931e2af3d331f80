using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

[Collection(LeakChecked.Name)]
public sealed unsafe class SafeArrayTests : LeakCheckedTest
{
    [Fact]
    public void New_array_is_zeroed_valid_and_recorded_in_the_ledger()
    {
        using var array = new SafeArray<long>(1000);
        Assert.Equal(1000, array.Length);
        Assert.True(array.IsValid);
        Assert.False(array.IsInvalid);
        Assert.False(array.IsClosed);
        Assert.All(array.ToArray(), value => Assert.Equal(0L, value));
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == array.Pointer);
        Assert.Equal((nuint)8000, info.Size);
        Assert.Equal(AllocationKind.SafeBuffer, info.Kind);
        Assert.Equal(typeof(long), info.ElementType);
        Assert.Equal(array.Pointer, array.DangerousGetHandle());
    }

    [Fact]
    public void A_lease_gives_references_to_the_native_elements()
    {
        using var array = new SafeArray<int>(10);
        array[3] = 42;
        using MemoryLease<int> lease = array.Lease();
        ref int alias = ref lease[3];
        alias++;
        Assert.Equal(43, array[3]);
        Assert.True(Unsafe.AreSame(ref alias, ref lease.Span[3]));
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(10)]
    [InlineData(int.MinValue)]
    public void Index_out_of_range_throws_IndexOutOfRangeException(int index)
    {
        using var array = new SafeArray<int>(10);
        Assert.Throws<IndexOutOfRangeException>(() => array[index]);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    public void Zero_or_negative_length_is_rejected(int length)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(length));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(Array.Empty<int>()));
        Assert.Throws<ArgumentNullException>(() => new SafeArray<int>((int[])null!));
    }

    [Fact]
    public void Every_member_that_touches_memory_throws_after_dispose()
    {
        var array = new SafeArray<int>(4);
        array.Dispose();

        Assert.False(array.IsValid);
        Assert.True(array.IsClosed);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        Assert.Throws<ObjectDisposedException>(() => array[10]);
        Assert.Throws<ObjectDisposedException>(() => array[0] = 1);
        Assert.Throws<ObjectDisposedException>(() => array.Lease().Dispose());
        Assert.Throws<ObjectDisposedException>(() => array.Pointer);
        Assert.Throws<ObjectDisposedException>(() => array.Fill(1));
        Assert.Throws<ObjectDisposedException>(() => array.CopyTo(new int[4]));
        Assert.Throws<ObjectDisposedException>(() => array.CopyFrom([1]));
        Assert.Throws<ObjectDisposedException>(() => array.ToArray());
        Assert.Throws<ObjectDisposedException>(() => array.EqualsArray(new int[4]));
        Assert.Throws<ObjectDisposedException>(array.Acquire);
        Assert.Throws<ObjectDisposedException>(array.Release);
        Assert.Throws<ObjectDisposedException>(() => array.GetEnumerator().MoveNext());
        Assert.Equal(-1, array.AcquireCount);
    }

    [Fact]
    public void Dispose_twice_does_nothing_the_second_time()
    {
        var array = new SafeArray<byte>(16);
        array.Dispose();
        array.Dispose();
        array.Close();
        Assert.False(array.IsValid);
    }

    [Fact]
    public void Dispose_while_acquired_throws_and_keeps_the_array_usable()
    {
        var array = new SafeArray<int>(4);
        array.Acquire();
        array.Acquire();

        var error = Assert.Throws<InvalidOperationException>(array.Dispose);
        Assert.Contains("acquired 2 time(s)", error.Message, StringComparison.Ordinal);
        Assert.False(array.IsClosed);
        array[0] = 1;

        array.Release();
        Assert.Throws<InvalidOperationException>(array.Dispose);
        array.Release();
        Assert.Throws<InvalidOperationException>(array.Release);
        array.Dispose();
        Assert.False(array.IsValid);
    }

    // One left acquired keeps its memory for good (a leak the ledger shows): the child-process
    // scenarios buffers-acquire-keeps-memory-* test that (Adversarial.LifetimeMisuseTests), as a leak
    // would fail this class's check.
    [Fact]
    public void A_leaked_array_is_freed_by_its_finalizer_once_its_acquisitions_are_released()
    {
        long liveCount = AllocationLedger.LiveCount;
        AllocationHandle handle = LeakAnArray();

        GC.Collect();
        GC.WaitForPendingFinalizers();

        Assert.False(handle.IsValid);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static AllocationHandle LeakAnArray()
    {
        var array = new SafeArray<long>(100_000);
        array.Acquire();
        array.Release();
        return array.Handle;
    }

    [Fact]
    public void A_native_call_holding_the_handle_keeps_the_memory_until_it_returns()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode would hold the freed block in the quarantine, still allocated.
        var array = new SafeArray<byte>(1 << 20);
        bool added = false;
        array.DangerousAddRef(ref added);
        long allocatedWhileHeld = NativeStats.AllocatedBytes();

        array.Dispose();

        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        Assert.Equal(allocatedWhileHeld, NativeStats.AllocatedBytes());

        array.DangerousRelease();

        Assert.Equal(allocatedWhileHeld - (1 << 20), NativeStats.AllocatedBytes());
    }

    [Fact]
    public void Arena_invalidation_leaves_the_freeing_to_the_arena_and_dispose_does_not_free_again()
    {
        uint arena = TestArena.Create();
        var array = new SafeArray<int>(1000, new AllocationOptions(MallocxFlags.Arena(arena) | MallocxFlags.NoThreadCache));
        array[999] = 1;

        Assert.Equal(1, AllocationLedger.InvalidateArena(arena));
        TestArena.Destroy(arena);

        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[999]);
        array.Dispose();
    }

    [Fact]
    public void Fill_copy_span_and_equality_with_arrays()
    {
        using var array = new SafeArray<int>(5);
        array.Fill(3);
        Assert.True(array.EqualsArray([3, 3, 3, 3, 3]));
        Assert.False(array.EqualsArray([3, 3, 3, 3]));
        Assert.False(array.EqualsArray([3, 3, 3, 3, 4]));
        Assert.Throws<ArgumentNullException>(() => array.EqualsArray(null!));

        array.CopyFrom([7, 8], 3);
        Assert.Equal([3, 3, 3, 7, 8], array.ToArray());
        Assert.True(array.SequenceEqual([3, 3, 3, 7, 8]));
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyFrom([1, 2], 4));
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyFrom([1], -1));

        var destination = new int[6];
        array.CopyTo(destination);
        Assert.Equal([3, 3, 3, 7, 8, 0], destination);
        Assert.Throws<ArgumentException>(() => array.CopyTo(new int[4]));

        using (MemoryLease<int> lease = array.Lease())
        {
            lease.AsSpan(1, 2).Clear();
        }

        Assert.Equal([3, 0, 0, 7, 8], array.ToArray());
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyFrom([1, 2], 4));
    }

    [Fact]
    public void Enumeration_yields_every_element_and_throws_if_disposed_midway()
    {
        var array = new SafeArray<int>([5, 6, 7]);
        Assert.Equal([5, 6, 7], array.ToList());
        Assert.Throws<ObjectDisposedException>(() =>
        {
            foreach (int value in array)
            {
                array.Dispose();
            }
        });
    }

    [Fact]
    public void Options_choose_the_alignment()
    {
        using var array = new SafeArray<byte>(100, new AllocationOptions(MallocxFlags.Align(256)));
        Assert.Equal(0, array.Pointer % 256);
    }
}
