using System.Runtime.InteropServices;
using jemalloc.Simd;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// The create-with-value constructors (no zeroing pass) and the non-temporal fill kernel behind every
/// <c>Fill</c>: every element holds exactly the value, whatever the length, element size, start
/// address and old contents of the memory.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class CreateWithValueTests : LeakCheckedTest
{
    /// <summary>Lengths around the vector widths (16, 32, 64 bytes) and a cache line's multiples.</summary>
    public static TheoryData<int> Lengths => [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4097];

    // Old data in the memory jemalloc hands out next: blocks of the same sizes, written and freed.
    private static void Dirty(int bytes)
    {
        for (int i = 0; i < 4; i++)
        {
            byte* block = (byte*)Jem.Malloc((nuint)bytes);
            new Span<byte>(block, bytes).Fill(0xA5);
            Jem.Free(block);
        }
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void SafeArray_with_a_value_holds_it_in_every_element(int length)
    {
        Dirty(length * sizeof(long));
        using var longs = new SafeArray<long>(length, -0x0102030405060708);
        Assert.All(longs.ToArray(), v => Assert.Equal(-0x0102030405060708, v));

        Dirty(length);
        using var bytes = new SafeArray<byte>(length, 0x3C);
        Assert.All(bytes.ToArray(), v => Assert.Equal(0x3C, v));

        using var triples = new SafeArray<Triple>(length, new Triple(1, 2, 3));
        Assert.All(triples.ToArray(), v => Assert.Equal(new Triple(1, 2, 3), v));
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void FixedBuffer_and_HugeArray_with_a_value_hold_it_in_every_element(int length)
    {
        Dirty(length * sizeof(int));
        var ints = new FixedBuffer<int>(length, 0x5EED);
        try
        {
            Assert.Equal(length, ints.Length);
            Assert.All(ints.ToArray(), v => Assert.Equal(0x5EED, v));
        }
        finally
        {
            ints.Free();
        }

        var doubles = new FixedBuffer<double>(length, -0.0, AllocationOptions.Default);
        try
        {
            Assert.All(doubles.ToArray(), v => Assert.Equal(BitConverter.DoubleToInt64Bits(-0.0), BitConverter.DoubleToInt64Bits(v)));
        }
        finally
        {
            doubles.Free();
        }

        using var shorts = new HugeArray<short>(length, (short)-2);
        using MemoryLease<short> lease = shorts.Lease();
        Assert.False(lease.Span.ContainsAnyExcept((short)-2));
    }

    [Fact]
    public void Blocks_above_the_non_temporal_threshold_are_filled_exactly_by_create_and_by_Fill()
    {
        int length = (int)(NonTemporalFill.ThresholdBytes / sizeof(ulong)) + 13;
        Assert.True(SimdKernels.FillsNonTemporally<ulong>(length) == NonTemporalFill.IsSupported);
        Dirty(length * sizeof(ulong));

        using (var created = new SafeArray<ulong>(length, 0xFEDCBA9876543210, AllocationOptions.Default))
        {
            using MemoryLease<ulong> lease = created.Lease();
            Assert.False(lease.Span.ContainsAnyExcept(0xFEDCBA9876543210UL));
        }

        using (var huge = new HugeArray<Triple>(length, new Triple(7, 8, 9), AllocationOptions.WithHugePages))
        {
            using (MemoryLease<Triple> lease = huge.Lease())
            {
                Assert.False(lease.Span.ContainsAnyExcept(new Triple(7, 8, 9)));
            }

            huge.Fill(new Triple(4, 5, 6));
            using MemoryLease<Triple> again = huge.Lease();
            Assert.False(again.Span.ContainsAnyExcept(new Triple(4, 5, 6)));
        }

        var buffer = new FixedBuffer<float>(length, 1.5f);
        try
        {
            buffer.Fill(float.NaN);
            using MemoryLease<float> lease = buffer.Lease();
            Assert.False(MemoryMarshal.Cast<float, int>(lease.Span).ContainsAnyExcept(BitConverter.SingleToInt32Bits(float.NaN)));
        }
        finally
        {
            buffer.Free();
        }

        using var array = new HugeArray<long>(length);
        array.VectorFill(-3L);
        using (MemoryLease<long> lease = array.Lease())
        {
            Assert.False(lease.Span.ContainsAnyExcept(-3L));
        }

        array.ParallelVectorFill(11L);
        using MemoryLease<long> final = array.Lease();
        Assert.False(final.Span.ContainsAnyExcept(11L));
    }

    [Fact]
    public void The_non_temporal_kernel_writes_exactly_the_elements_asked_for_at_any_start()
    {
        const int Guard = 256;
        int bytes = 200_000;
        byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)(bytes + 2 * Guard), 64);
        try
        {
            foreach (int offset in new[] { 0, 1, 3, 8, 17, 63 })
            {
                foreach (int count in new[] { 100_000, 150_001 })
                {
                    new Span<byte>(block, bytes + 2 * Guard).Fill(0xEE);
                    var value = new Triple(0x11111111, 0x22222222, 0x33333333);
                    var destination = (Triple*)(block + Guard + offset);
                    int elements = count / sizeof(Triple);
                    bool streamed = NonTemporalFill.TryFill(destination, (nuint)elements, value);
                    Assert.Equal(NonTemporalFill.IsSupported, streamed);
                    if (!streamed)
                    {
                        continue;
                    }

                    Assert.False(new ReadOnlySpan<Triple>(destination, elements).ContainsAnyExcept(value));
                    Assert.False(new ReadOnlySpan<byte>(block, Guard + offset).ContainsAnyExcept((byte)0xEE));
                    byte* after = (byte*)(destination + elements);
                    Assert.False(new ReadOnlySpan<byte>(after, (int)(block + bytes + 2 * Guard - after)).ContainsAnyExcept((byte)0xEE));

                    ulong* longs = (ulong*)(block + Guard + (offset & ~7));
                    Assert.True(NonTemporalFill.TryFill(longs, 10_001, 0x0123456789ABCDEFUL));
                    Assert.False(new ReadOnlySpan<ulong>(longs, 10_001).ContainsAnyExcept(0x0123456789ABCDEFUL));
                }
            }

            Assert.False(NonTemporalFill.TryFill((long*)block, 16, 1L)); // too small to stream
        }
        finally
        {
            NativeMemory.AlignedFree(block);
        }
    }

    [Fact]
    public void Bad_arguments_throw()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(-1, 1, AllocationOptions.Default));
        Assert.Throws<ArgumentOutOfRangeException>(() => new HugeArray<int>(0L, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new HugeArray<int>(-5L, 1, AllocationOptions.Default));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(-1, 1, AllocationOptions.Default));
        Assert.Throws<NotSupportedException>(() => new FixedBuffer<decimal>(4, 1m));
        Assert.Throws<OverflowException>(() => new HugeArray<long>(long.MaxValue / 2, 1L));
    }

    [StructLayout(LayoutKind.Sequential)]
    private readonly record struct Triple(int A, int B, int C);
}
