using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// A <see cref="HugeArray{T}"/> past 2^31 elements. It touches about 2 GiB: run test runs that include
/// it under <c>flock /tmp/jemalloc-bigmem.lock</c> on shared machines.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class HugeArrayBigMemoryTests : LeakCheckedTest
{
    private const long Boundary = 1L << 31;
    private const long Length = Boundary + 4097;

    [Fact]
    public void More_than_2_pow_31_bytes_are_written_and_read_at_both_ends_and_across_the_boundary()
    {
        using var array = new HugeArray<byte>(Length);
        Assert.Equal(Length, array.Length);

        array[0] = 1;
        array[Boundary - 1] = 2;
        array[Boundary] = 3;
        array[Boundary + 1] = 4;
        array[Length - 1] = 5;
        Assert.Equal(1, array[0]);
        Assert.Equal(2, array[Boundary - 1]);
        Assert.Equal(3, array[Boundary]);
        Assert.Equal(4, array[Boundary + 1]);
        Assert.Equal(5, array[Length - 1]);
        Assert.Throws<IndexOutOfRangeException>(() => array[Length]);

        // A span copy straddling the 2^31 boundary.
        array.CopyFrom([10, 11, 12, 13], Boundary - 2);
        var across = new byte[6];
        array.CopyTo(across, Boundary - 3);
        Assert.Equal([0, 10, 11, 12, 13, 0], across);
        Assert.Equal(12, array[Boundary]);
    }

    [Fact]
    public void Created_with_a_value_every_element_past_2_pow_31_holds_it()
    {
        using var array = new HugeArray<byte>(Length, (byte)0xC3);
        using MemoryLease<byte> lease = array.Lease();
        long covered = 0;
        foreach (Span<byte> chunk in lease.GetChunks())
        {
            Assert.False(chunk.ContainsAnyExcept((byte)0xC3));
            covered += chunk.Length;
        }

        Assert.Equal(Length, covered);
    }

    [Fact]
    public void Chunked_and_parallel_operations_cover_every_element_past_2_pow_31()
    {
        using var array = new HugeArray<byte>(Length);
        int chunks = 0;
        long covered = 0;
        using MemoryLease<byte> lease = array.Lease();
        foreach (Span<byte> chunk in lease.GetChunks())
        {
            chunks++;
            covered += chunk.Length;
        }

        Assert.Equal(3, chunks);
        Assert.Equal(Length, covered);

        array.ParallelVectorFill((byte)1);
        array[Length - 1] = 9;
        // Byte sums wrap: (Length - 1) ones and one nine, modulo 256.
        byte expected = unchecked((byte)((Length - 1) + 9));
        Assert.Equal(expected, array.ParallelVectorSum());
        Assert.Equal(expected, array.VectorSum());
        Assert.Equal((byte)9, array.ParallelVectorMax());
        Assert.Equal((byte)1, array.VectorMin());
        Assert.False(array.VectorAllLessThan((byte)9));
        Assert.True(array.VectorAllLessThan((byte)10));
    }
}
