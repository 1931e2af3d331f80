using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>jemalloc's <c>malloc</c>/<c>free</c>.</summary>
internal readonly unsafe struct JemMallocBlocks : IBlockSource<nint>
{
    public static nint Allocate(int size, byte mark) => Touch((byte*)Jem.Malloc((nuint)size), size, mark);

    public static long ReadAndFree(nint block, int size)
    {
        long value = ReadEnds((byte*)block, size);
        Jem.Free((void*)block);
        return value;
    }
}
