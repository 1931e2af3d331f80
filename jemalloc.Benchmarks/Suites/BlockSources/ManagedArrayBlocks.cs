namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary><c>new byte[]</c> (zeroed by the runtime); freeing is dropping the last reference, which the suite's loop does.</summary>
internal readonly struct ManagedArrayBlocks : IBlockSource<byte[]>
{
    public static byte[] Allocate(int size, byte mark)
    {
        var array = new byte[size];
        array[0] = mark;
        array[size - 1] = mark;
        return array;
    }

    public static long ReadAndFree(byte[] block, int size) => size + block[0] + block[size - 1];
}
