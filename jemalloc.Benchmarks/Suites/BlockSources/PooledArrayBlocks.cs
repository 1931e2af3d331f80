using System.Buffers;

namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>Arrays rented from <see cref="ArrayPool{T}.Shared"/> (at least the size asked for, not cleared) and returned.</summary>
internal readonly struct PooledArrayBlocks : IBlockSource<byte[]>
{
    public static byte[] Allocate(int size, byte mark)
    {
        byte[] array = ArrayPool<byte>.Shared.Rent(size);
        array[0] = mark;
        array[size - 1] = mark;
        return array;
    }

    public static long ReadAndFree(byte[] block, int size)
    {
        long value = size + block[0] + block[size - 1];
        ArrayPool<byte>.Shared.Return(block);
        return value;
    }
}
