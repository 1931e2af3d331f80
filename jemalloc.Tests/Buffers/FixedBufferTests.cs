using System.Runtime.CompilerServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

[Collection(LeakChecked.Name)]
public sealed unsafe class FixedBufferTests : LeakCheckedTest
{
    [Fact]
    public void New_buffer_is_zeroed_valid_and_recorded_in_the_ledger()
    {
        var buffer = new FixedBuffer<long>(1000);
        try
        {
            Assert.Equal(1000, buffer.Length);
            Assert.True(buffer.IsValid);
            Assert.All(buffer.ToArray(), value => Assert.Equal(0L, value));
            AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == buffer.Pointer);
            Assert.Equal((nuint)8000, info.Size);
            Assert.Equal(AllocationKind.FixedBuffer, info.Kind);
            Assert.Equal(typeof(long), info.ElementType);
        }
        finally
        {
            buffer.Free();
        }
    }

    [Theory]
    [InlineData(64)]
    [InlineData(4096)]
    [InlineData(20_000)]
    public void Memory_is_zeroed_even_when_jemalloc_reuses_a_dirty_region(int size)
    {
        // Small sizes are cleared by the ledger after je_malloc, larger ones by je_mallocx(MALLOCX_ZERO).
        for (int round = 0; round < 3; round++)
        {
            var buffer = new FixedBuffer<byte>(size);
            Assert.DoesNotContain(buffer.ToArray(), value => value != 0);
            buffer.Fill(0xAB);
            buffer.Free();
        }
    }

    [Fact]
    public void Indexer_reads_copy_and_ref_locals_alias_the_native_element()
    {
        var b = new FixedBuffer<int>(100);
        b[15] = 6;
        int num = b[15];
        num = 7;
        Assert.Equal(6, b[15]);
        Assert.Equal(7, num);

        using (MemoryLease<int> lease = b.Lease())
        {
            ref int r = ref lease[15];
            r = 23;
            Assert.Equal(23, b[15]);
            Assert.True(Unsafe.AreSame(ref r, ref lease.Span[15]));
        }

        b.Free();
    }

    [Fact]
    public void Copies_share_memory_and_validity()
    {
        var array = new FixedBuffer<int>(100);
        array[16] = 1;
        FixedBuffer<int> copy = array;
        Assert.Equal(1, copy[16]);
        copy[5] = 99;
        Assert.Equal(99, array[5]);
        Assert.True(copy == array);

        copy.Free();

        Assert.False(array.IsValid);
        Assert.False(copy.IsValid);
        var error = Assert.Throws<ObjectDisposedException>(() => array[16]);
        Assert.IsAssignableFrom<InvalidOperationException>(error);
        Assert.Throws<ObjectDisposedException>(() => copy[5] = 1);
    }

    [Fact]
    public void Every_member_that_touches_memory_throws_after_free_through_another_copy()
    {
        var buffer = new FixedBuffer<double>(8);
        FixedBuffer<double> other = buffer;
        other.Free();

        DisposedMessages.AssertFreed("FixedBuffer", () => buffer[0]);
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer[0] = 1);
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.Length);
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.Lease().Dispose());
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.CopyFrom([1.0]));
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.Fill(1));
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.CopyTo(new double[8]));
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.ToArray());
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.SequenceEqual(new double[8]));
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.Pointer);
        DisposedMessages.AssertFreed("FixedBuffer", buffer.Acquire);
        DisposedMessages.AssertFreed("FixedBuffer", buffer.Release);
        DisposedMessages.AssertFreed("FixedBuffer", buffer.ThrowIfInvalid);
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer.GetEnumerator().MoveNext());
        // The length lives in the ledger slot, which a free gives away: any index on a freed buffer is a use after free.
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer[100]);
        DisposedMessages.AssertFreed("FixedBuffer", () => buffer[-1]);
        Assert.Equal(-1, buffer.AcquireCount);
    }

    [Fact]
    public void Double_free_throws_ObjectDisposedException()
    {
        var buffer = new FixedBuffer<byte>(10);
        FixedBuffer<byte> copy = buffer;
        buffer.Free();
        DisposedMessages.AssertFreed("FixedBuffer", buffer.Free);
        DisposedMessages.AssertFreed("FixedBuffer", copy.Free);
    }

    [Fact]
    public void Free_while_acquired_throws_and_keeps_the_buffer_usable()
    {
        var buffer = new FixedBuffer<int>(4);
        FixedBuffer<int> copy = buffer;
        buffer.Acquire();
        Assert.Equal(1, copy.AcquireCount);

        Assert.Throws<InvalidOperationException>(copy.Free);
        copy[1] = 5;
        Assert.Equal(5, buffer[1]);

        buffer.Release();
        Assert.Throws<InvalidOperationException>(buffer.Release);
        copy.Free();
        Assert.False(buffer.IsValid);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public void Zero_or_negative_length_is_rejected(int length)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(length));
        Assert.Equal("length", error.ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(Array.Empty<int>()));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(ReadOnlySpan<int>.Empty));
    }

    [Fact]
    public void Null_array_is_rejected()
    {
        Assert.Throws<ArgumentNullException>(() => new FixedBuffer<int>((int[])null!));
    }

    [Fact]
    public void Non_primitive_element_types_are_rejected_with_a_clear_message()
    {
        var error = Assert.Throws<NotSupportedException>(() => new FixedBuffer<decimal>(4));
        Assert.Contains("System.Decimal", error.Message, StringComparison.Ordinal);
        Assert.Throws<NotSupportedException>(() => new FixedBuffer<Guid>(4));
        Assert.Throws<NotSupportedException>(() => new FixedBuffer<FixedBuffer<int>>(4));
    }

    [Fact]
    public void Every_primitive_type_is_supported()
    {
        static void RoundTrip<T>(T value)
            where T : unmanaged
        {
            var buffer = new FixedBuffer<T>(3);
            buffer[2] = value;
            Assert.Equal(value, buffer[2]);
            Assert.Equal(default, buffer[0]);
            buffer.Free();
        }

        RoundTrip(true);
        RoundTrip((byte)200);
        RoundTrip((sbyte)-100);
        RoundTrip((short)-30000);
        RoundTrip((ushort)60000);
        RoundTrip(-2_000_000_000);
        RoundTrip(4_000_000_000u);
        RoundTrip(long.MinValue);
        RoundTrip(ulong.MaxValue);
        RoundTrip((nint)(-5));
        RoundTrip((nuint)5);
        RoundTrip('é');
        RoundTrip(Math.PI);
        RoundTrip(1.5f);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(10)]
    [InlineData(int.MaxValue)]
    [InlineData(int.MinValue)]
    public void Index_out_of_range_throws_IndexOutOfRangeException(int index)
    {
        var buffer = new FixedBuffer<int>(10);
        try
        {
            Assert.Throws<IndexOutOfRangeException>(() => buffer[index]);
        }
        finally
        {
            buffer.Free();
        }
    }

    [Fact]
    public void Default_buffer_is_empty_owns_nothing_and_rejects_use()
    {
        FixedBuffer<int> buffer = default;
        Assert.Equal(0, buffer.Length);
        Assert.False(buffer.IsValid);
        Assert.Throws<IndexOutOfRangeException>(() => buffer[0]);
        Assert.Throws<ObjectDisposedException>(() => buffer.Lease().Dispose());
        Assert.Throws<ObjectDisposedException>(buffer.Free);
        Assert.Throws<ObjectDisposedException>(buffer.Acquire);
        Assert.False(buffer.GetEnumerator().MoveNext());
    }

    [Fact]
    public void Constructors_from_array_and_span_copy_the_values()
    {
        int[] values = [1, 2, 3, 4, 5];
        var fromArray = new FixedBuffer<int>(values);
        var fromSpan = new FixedBuffer<int>(values.AsSpan(1, 3));
        values[0] = 100;

        Assert.Equal([1, 2, 3, 4, 5], fromArray.ToArray());
        Assert.Equal([2, 3, 4], fromSpan.ToArray());
        Assert.True(fromArray.SequenceEqual([1, 2, 3, 4, 5]));
        Assert.False(fromArray.SequenceEqual([1, 2, 3, 4]));
        Assert.False(fromArray.SequenceEqual([1, 2, 3, 4, 6]));
        fromArray.Free();
        fromSpan.Free();
    }

    [Fact]
    public void Fill_CopyTo_Slice_and_AsSpan_work_on_the_native_memory()
    {
        var buffer = new FixedBuffer<short>(6);
        buffer.Fill(7);
        Assert.Equal([7, 7, 7, 7, 7, 7], buffer.ToArray());

        using (MemoryLease<short> lease = buffer.Lease())
        {
            lease.AsSpan(2, 3).Fill(1);
            Assert.Equal([7, 7, 1, 1, 1, 7], buffer.ToArray());
            lease.AsSpan(5, 1)[0] = 9;
            Assert.Equal(9, buffer[5]);
            Assert.Equal(6, lease.Span.Length);
            Assert.Equal(0, lease.AsSpan(6, 0).Length);
        }

        var destination = new short[8];
        buffer.CopyTo(destination);
        Assert.Equal([7, 7, 1, 1, 1, 9, 0, 0], destination);

        Assert.Throws<ArgumentException>(() => buffer.CopyTo(new short[5]));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.CopyFrom(new short[3], 4));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.CopyFrom(new short[2], -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.CopyFrom(default, 7));
        Assert.Throws<ArgumentOutOfRangeException>(() => LeasedSlice(buffer, 0, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => LeasedSlice(buffer, 4, 3));
        Assert.Equal(0, buffer.AcquireCount);
        buffer.Free();
    }

    [Fact]
    public void Enumeration_yields_every_element_in_order()
    {
        var buffer = new FixedBuffer<int>([3, 1, 4, 1, 5]);
        var seen = new List<int>();
        foreach (int value in buffer)
        {
            seen.Add(value);
        }

        Assert.Equal([3, 1, 4, 1, 5], seen);
        Assert.Equal(14, buffer.Sum());
        buffer.Free();
    }

    [Fact]
    public void Enumeration_throws_when_the_buffer_is_freed_midway()
    {
        var buffer = new FixedBuffer<int>(4);
        Assert.Throws<ObjectDisposedException>(() =>
        {
            foreach (int value in buffer)
            {
                buffer.Free();
            }
        });
    }

    [Fact]
    public void Equality_is_identity_of_the_memory()
    {
        var a = new FixedBuffer<int>([1, 2]);
        var b = new FixedBuffer<int>([1, 2]);
        FixedBuffer<int> copy = a;

        Assert.True(a.Equals(copy));
        Assert.True(a.Equals((object)copy));
        Assert.Equal(a.GetHashCode(), copy.GetHashCode());
        Assert.False(a == b);
        Assert.True(a != b);
        Assert.False(a.Equals("not a buffer"));
        Assert.True(default(FixedBuffer<int>) == default);
        a.Free();
        b.Free();
        Assert.True(a == copy);
    }

    [Fact]
    public void ToString_names_type_length_and_state()
    {
        var buffer = new FixedBuffer<float>(3);
        Assert.Equal("FixedBuffer<Single>[3]", buffer.ToString());
        buffer.Free();
        Assert.Equal("FixedBuffer<Single> (freed)", buffer.ToString());
    }

    [Fact]
    public void Pointer_addresses_the_first_element_for_native_calls()
    {
        var buffer = new FixedBuffer<int>([10, 20]);
        Assert.Equal(20, ((int*)buffer.Pointer)[1]);
        buffer.Free();
    }

    [Fact]
    public void Options_choose_the_alignment()
    {
        var buffer = new FixedBuffer<byte>(10, new AllocationOptions(MallocxFlags.Align(4096)));
        Assert.Equal(0, buffer.Pointer % 4096);
        Assert.All(buffer.ToArray(), value => Assert.Equal(0, value));
        buffer.Free();
    }

    [Fact]
    public void Buffer_is_an_unmanaged_struct_that_can_be_stored_in_native_memory()
    {
        Assert.False(RuntimeHelpers.IsReferenceOrContainsReferences<FixedBuffer<int>>());
        Assert.False(RuntimeHelpers.IsReferenceOrContainsReferences<FixedUtf8String>());
    }

    private static int LeasedSlice(FixedBuffer<short> buffer, int start, int length)
    {
        using MemoryLease<short> lease = buffer.Lease();
        return lease.AsSpan(start, length).Length;
    }
}
