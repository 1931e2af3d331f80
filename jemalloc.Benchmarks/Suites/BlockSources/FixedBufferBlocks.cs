namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>A zeroed <see cref="FixedBuffer{T}"/> of bytes, created and freed one by one through its checked handle.</summary>
internal readonly struct FixedBufferBlocks : IBlockSource<FixedBuffer<byte>>
{
    public static FixedBuffer<byte> Allocate(int size, byte mark)
    {
        var buffer = new FixedBuffer<byte>(size);
        buffer[0] = mark;
        buffer[size - 1] = mark;
        return buffer;
    }

    public static long ReadAndFree(FixedBuffer<byte> block, int size)
    {
        long value = size + block[0] + block[size - 1];
        block.Free();
        return value;
    }
}
