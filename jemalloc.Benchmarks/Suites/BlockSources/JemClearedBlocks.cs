using System.Runtime.InteropServices;
using jemalloc.Benchmarks.Infrastructure;
using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>The native calls a <see cref="FixedBuffer{T}"/> makes, with its zeroing: <c>malloc</c>, clear, the <c>sdallocx</c> export (no size check).</summary>
internal readonly unsafe struct JemClearedBlocks : IBlockSource<nint>
{
    public static nint Allocate(int size, byte mark)
    {
        byte* memory = (byte*)Jem.Malloc((nuint)size);
        if (memory == null)
        {
            NativeMemoryError.Throw("jemalloc", (nuint)size);
        }

        NativeMemory.Clear(memory, (nuint)size);
        return Touch(memory, size, mark);
    }

    public static long ReadAndFree(nint block, int size)
    {
        long value = ReadEnds((byte*)block, size);
        JemExports.Sdallocx((void*)block, (nuint)size, 0);
        return value;
    }
}
