using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

[Collection(LeakChecked.Name)]
public sealed class HugeArrayTests : LeakCheckedTest
{
    [Fact]
    public void New_array_is_zeroed_valid_and_recorded_in_the_ledger()
    {
        using var array = new HugeArray<int>(1000);
        Assert.Equal(1000L, array.Length);
        Assert.True(array.IsValid);
        Assert.False(array.IsInvalid);
        var all = new int[1000];
        array.CopyTo(all, 0);
        Assert.All(all, value => Assert.Equal(0, value));
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == array.Pointer);
        Assert.Equal(AllocationKind.HugeBuffer, info.Kind);
        Assert.Equal((nuint)4000, info.Size);
    }

    [Fact]
    public void A_lease_gives_references_to_the_native_elements_by_long_index()
    {
        using var array = new HugeArray<long>(10);
        array[9L] = 5;
        using MemoryLease<long> lease = array.Lease();
        ref long alias = ref lease[9L];
        alias *= 3;
        Assert.Equal(15, array[9]);
        Assert.True(Unsafe.AreSame(ref alias, ref lease.AsSpan(9, 1)[0]));
    }

    [Theory]
    [InlineData(-1L)]
    [InlineData(10L)]
    [InlineData(long.MaxValue)]
    [InlineData(long.MinValue)]
    public void Index_out_of_range_throws_IndexOutOfRangeException(long index)
    {
        using var array = new HugeArray<byte>(10);
        Assert.Throws<IndexOutOfRangeException>(() => array[index]);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    public void Zero_or_negative_length_is_rejected(long length)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new HugeArray<int>(length));
    }

    [Theory]
    [InlineData(long.MaxValue)]
    [InlineData((long.MaxValue / 8) + 1)]
    public void Size_overflow_is_an_OverflowException_not_a_wrap(long length)
    {
        long liveCount = AllocationLedger.LiveCount;
        var error = Assert.Throws<OverflowException>(() => new HugeArray<long>(length));
        Assert.Contains("8 bytes", error.Message, StringComparison.Ordinal);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Allocation_beyond_memory_throws_OutOfMemoryException()
    {
        long liveCount = AllocationLedger.LiveCount;
        Assert.Throws<OutOfMemoryException>(() => new HugeArray<long>(1L << 56));
        Assert.Throws<OutOfMemoryException>(() => new SafeArray<long>(1000, new AllocationOptions(MallocxFlags.Align((nuint)1 << 62))));
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Chunks_cover_the_array_in_order_with_their_offsets()
    {
        using var array = new HugeArray<int>(1000);
        var seen = new List<(long Offset, int Length)>();
        using MemoryLease<int> lease = array.Lease();
        var walker = lease.GetChunks(300);
        while (walker.MoveNext())
        {
            seen.Add((walker.CurrentOffset, walker.Current.Length));
            for (int i = 0; i < walker.Current.Length; i++)
            {
                walker.Current[i] = (int)(walker.CurrentOffset + i);
            }
        }

        Assert.Equal([(0L, 300), (300L, 300), (600L, 300), (900L, 100)], seen);
        for (long i = 0; i < array.Length; i++)
        {
            Assert.Equal(i, array[i]);
        }

        Assert.Throws<ArgumentOutOfRangeException>(() => ChunkCount(array, 0));
        Assert.Equal(1, ChunkCount(array, int.MaxValue));
    }

    [Fact]
    public void Fill_CopyFrom_and_CopyTo_work_at_any_offset_and_check_ranges()
    {
        using var array = new HugeArray<short>(20);
        array.Fill(4);
        array.CopyFrom([1, 2, 3], 17);
        var tail = new short[5];
        array.CopyTo(tail, 15);
        Assert.Equal([4, 4, 1, 2, 3], tail);

        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyFrom([1, 2], 19));
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyFrom([1], -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyTo(new short[2], 19));
        Assert.Throws<ArgumentOutOfRangeException>(() => array.CopyTo(new short[1], long.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => LeasedSlice(array, 10, 11));
        Assert.Throws<ArgumentOutOfRangeException>(() => LeasedSlice(array, 0, -1));
        Assert.Equal(10, LeasedSlice(array, 10, 10));
        Assert.Equal(0, array.Handle.LeaseCount);
    }

    [Fact]
    public void Enumeration_yields_every_element()
    {
        using var array = new HugeArray<int>(4);
        array.CopyFrom([9, 8, 7, 6], 0);
        Assert.Equal([9, 8, 7, 6], array.ToList());
    }

    [Fact]
    public void Every_member_that_touches_memory_throws_after_dispose()
    {
        var array = new HugeArray<int>(10);
        array.Dispose();
        array.Dispose();

        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        Assert.Throws<ObjectDisposedException>(() => array[100]);
        Assert.Throws<ObjectDisposedException>(() => array.Pointer);
        Assert.Throws<ObjectDisposedException>(() => array.Lease().Dispose());
        Assert.Throws<ObjectDisposedException>(() => array[0] = 1);
        Assert.Throws<ObjectDisposedException>(() => array.Fill(1));
        Assert.Throws<ObjectDisposedException>(() => array.CopyFrom([1], 0));
        Assert.Throws<ObjectDisposedException>(() => array.CopyTo(new int[1], 0));
        Assert.Throws<ObjectDisposedException>(array.Acquire);
        Assert.Throws<ObjectDisposedException>(array.Release);
        Assert.Throws<ObjectDisposedException>(() => array.GetEnumerator().MoveNext());
    }

    [Fact]
    public void Disposing_during_a_leased_chunk_walk_is_refused_and_the_walk_completes()
    {
        using var array = new HugeArray<int>(100);
        int chunks = 0;
        using (MemoryLease<int> lease = array.Lease())
        {
            foreach (Span<int> chunk in lease.GetChunks(10))
            {
                Assert.Throws<InvalidOperationException>(array.Dispose);
                chunk.Fill(1);
                chunks++;
            }
        }

        Assert.Equal(10, chunks);
        Assert.Equal(100, array.VectorSum());
    }

    [Fact]
    public void Dispose_while_acquired_throws()
    {
        var array = new HugeArray<int>(10);
        array.Acquire();
        Assert.Throws<InvalidOperationException>(array.Dispose);
        array[1] = 1;
        array.Release();
        Assert.Throws<InvalidOperationException>(array.Release);
        array.Dispose();
    }

    [Fact]
    public void A_leaked_array_is_freed_by_its_finalizer()
    {
        long liveCount = AllocationLedger.LiveCount;
        AllocationHandle handle = LeakAnArray();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Assert.False(handle.IsValid);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static AllocationHandle LeakAnArray() => new HugeArray<int>(1 << 20).Handle;

    [Fact]
    public void Arena_invalidation_makes_the_indexer_throw_and_dispose_does_not_free_again()
    {
        uint arena = TestArena.Create();
        var array = new HugeArray<long>(1000, new AllocationOptions(MallocxFlags.Arena(arena) | MallocxFlags.NoThreadCache));
        array[999] = 1;

        Assert.Equal(1, AllocationLedger.InvalidateArena(arena));
        TestArena.Destroy(arena);

        Assert.False(array.IsValid);
        Assert.Throws<ObjectDisposedException>(() => array[999]);
        Assert.Throws<ObjectDisposedException>(() => array.Fill(1));
        array.Dispose();
    }

    [Fact]
    public void Huge_page_option_aligns_the_array_to_2_MiB()
    {
        using var array = new HugeArray<byte>(4 << 20, AllocationOptions.WithHugePages);
        Assert.Equal(0, array.Pointer % (2 << 20));
        array[(4 << 20) - 1] = 1;
        Assert.Equal(1, array[(4 << 20) - 1]);
    }

    private static int LeasedSlice(HugeArray<short> array, long start, int length)
    {
        using MemoryLease<short> lease = array.Lease();
        return lease.AsSpan(start, length).Length;
    }

    private static int ChunkCount(HugeArray<int> array, int maxChunkLength)
    {
        using MemoryLease<int> lease = array.Lease();
        int count = 0;
        foreach (Span<int> chunk in lease.GetChunks(maxChunkLength))
        {
            count++;
        }

        return count;
    }
}
