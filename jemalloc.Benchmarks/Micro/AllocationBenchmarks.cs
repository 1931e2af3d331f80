using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// Creating and freeing a 64-byte <see cref="FixedBuffer{T}"/> (zeroed, recorded in the ledger)
/// against the raw jemalloc calls. Goal: within 2x of <c>malloc</c> + <c>free</c>.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Performance", "CA1822:Mark members as static", Justification = "BenchmarkDotNet runs instance methods.")]
public unsafe class AllocationBenchmarks
{
    private const int Size = 64;

    /// <summary>Raw <c>je_malloc</c> + <c>je_free</c>.</summary>
    [Benchmark(Baseline = true, Description = "je_malloc + je_free (64 B)")]
    public void MallocFree()
    {
        void* memory = Jem.Malloc(Size);
        *(byte*)memory = 1;
        Jem.Free(memory);
    }

    /// <summary>Raw zeroing <c>je_mallocx</c> (<c>MALLOCX_ZERO</c>) + sized <c>je_sdallocx</c>.</summary>
    [Benchmark(Description = "je_mallocx(ZERO) + je_sdallocx (64 B)")]
    public void MallocxZeroSdallocx()
    {
        void* memory = Jem.Mallocx(Size, MallocxFlags.Zero);
        *(byte*)memory = 1;
        Jem.Sdallocx(memory, Size, MallocxFlags.Zero);
    }

    /// <summary>
    /// The raw work a FixedBuffer does with the default options: <c>je_mallocx</c>, a clear of the
    /// block (the ledger clears; it does not ask jemalloc to), sized <c>je_sdallocx</c>.
    /// </summary>
    [Benchmark(Description = "je_mallocx + clear + je_sdallocx (64 B)")]
    public void MallocxClearSdallocx()
    {
        void* memory = Jem.Mallocx(Size);
        NativeMemory.Clear(memory, Size);
        *(byte*)memory = 1;
        Jem.Sdallocx(memory, Size, 0);
    }

    /// <summary><c>new FixedBuffer&lt;byte&gt;(64)</c> + <c>Free()</c>.</summary>
    [Benchmark(Description = "new FixedBuffer<byte>(64) + Free()")]
    public void FixedBufferCreateFree()
    {
        var buffer = new FixedBuffer<byte>(Size);
        buffer[0] = 1;
        buffer.Free();
    }

    /// <summary>A managed <c>new byte[64]</c>, for reference (the GC's cost is amortised, not shown here).</summary>
    [Benchmark(Description = "new byte[64] (managed)")]
    public byte[] ManagedArray()
    {
        var array = new byte[Size];
        array[0] = 1;
        return array;
    }
}
