using System.Runtime.InteropServices;
using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>The C library's <c>malloc</c>/<c>free</c>, as .NET exposes them (<see cref="NativeMemory.Alloc(nuint)"/>).</summary>
internal readonly unsafe struct CMallocBlocks : IBlockSource<nint>
{
    public static nint Allocate(int size, byte mark) => Touch((byte*)NativeMemory.Alloc((nuint)size), size, mark);

    public static long ReadAndFree(nint block, int size)
    {
        long value = ReadEnds((byte*)block, size);
        NativeMemory.Free((void*)block);
        return value;
    }
}
