using jemalloc.Benchmarks.Infrastructure;
using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>mimalloc's <c>mi_malloc</c>/<c>mi_free</c> (the caller checks <see cref="Mimalloc.IsAvailable"/> first).</summary>
internal readonly unsafe struct MimallocBlocks : IBlockSource<nint>
{
    public static nint Allocate(int size, byte mark) => Touch((byte*)Mimalloc.Malloc((nuint)size), size, mark);

    public static long ReadAndFree(nint block, int size)
    {
        long value = ReadEnds((byte*)block, size);
        Mimalloc.Free((void*)block);
        return value;
    }
}
