using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;

namespace jemalloc.Benchmarks.Interop;

/// <summary>
/// Does <see cref="SuppressGCTransitionAttribute"/> pay on jemalloc's fast calls? Compares, in one run,
/// the library's own P/Invokes (<see cref="Jem"/>, normal GC transition) with the same exports
/// called through function pointers with and without the <c>SuppressGCTransition</c> calling-convention
/// modifier, and glibc through <see cref="NativeMemory"/> as the platform baseline. Each operation is
/// one allocation and its free (or one size query) of a small size.
/// </summary>
[MemoryDiagnoser(false)]
public unsafe class GcTransitionBenchmarks
{
    private const int Operations = 1024;

    private delegate* unmanaged<nuint, void*> _malloc;
    private delegate* unmanaged<void*, void> _free;
    private delegate* unmanaged[SuppressGCTransition]<nuint, void*> _mallocSuppressed;
    private delegate* unmanaged[SuppressGCTransition]<void*, void> _freeSuppressed;
    private delegate* unmanaged<void*, int, nuint> _sallocx;
    private delegate* unmanaged[SuppressGCTransition]<void*, int, nuint> _sallocxSuppressed;
    private void* _block;

    /// <summary>The allocation size in bytes.</summary>
    [Params(16, 64, 512)]
    public int Size { get; set; }

    /// <summary>Loads jemalloc and looks the exports up once.</summary>
    [GlobalSetup]
    public void Setup()
    {
        // The library loaded it already; this only takes its handle, to look the exports up.
        nint library = NativeLibrary.Load(Jem.Load(), typeof(Jem).Assembly, null);
        _malloc = (delegate* unmanaged<nuint, void*>)NativeLibrary.GetExport(library, "je_malloc");
        _free = (delegate* unmanaged<void*, void>)NativeLibrary.GetExport(library, "je_free");
        _mallocSuppressed = (delegate* unmanaged[SuppressGCTransition]<nuint, void*>)_malloc;
        _freeSuppressed = (delegate* unmanaged[SuppressGCTransition]<void*, void>)_free;
        _sallocx = (delegate* unmanaged<void*, int, nuint>)NativeLibrary.GetExport(library, "je_sallocx");
        _sallocxSuppressed = (delegate* unmanaged[SuppressGCTransition]<void*, int, nuint>)_sallocx;
        _block = Jem.Malloc((nuint)Size);
    }

    /// <summary>Frees the block used by the size queries.</summary>
    [GlobalCleanup]
    public void Cleanup() => Jem.Free(_block);

    /// <summary>The library's LibraryImport declarations, normal GC transition.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Operations)]
    public void MallocFreeLibraryImport()
    {
        nuint size = (nuint)Size;
        for (int i = 0; i < Operations; i++)
        {
            Jem.Free(Jem.Malloc(size));
        }
    }

    /// <summary>Function pointers, normal GC transition.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public void MallocFreeFunctionPointer()
    {
        nuint size = (nuint)Size;
        for (int i = 0; i < Operations; i++)
        {
            _free(_malloc(size));
        }
    }

    /// <summary>Function pointers with the GC transition suppressed.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public void MallocFreeSuppressed()
    {
        nuint size = (nuint)Size;
        for (int i = 0; i < Operations; i++)
        {
            _freeSuppressed(_mallocSuppressed(size));
        }
    }

    /// <summary>glibc malloc/free through <see cref="NativeMemory"/>.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public void MallocFreeGlibc()
    {
        nuint size = (nuint)Size;
        for (int i = 0; i < Operations; i++)
        {
            NativeMemory.Free(NativeMemory.Alloc(size));
        }
    }

    /// <summary>A size query (<c>je_sallocx</c>) with the normal GC transition.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public nuint SallocxTransition()
    {
        nuint total = 0;
        for (int i = 0; i < Operations; i++)
        {
            total += _sallocx(_block, 0);
        }

        return total;
    }

    /// <summary>The library's size query: suppressed transition behind a per-thread readiness check.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public nuint SallocxLibrary()
    {
        nuint total = 0;
        for (int i = 0; i < Operations; i++)
        {
            total += Jem.Sallocx(_block, 0);
        }

        return total;
    }

    /// <summary>A size query (<c>je_sallocx</c>) with the GC transition suppressed.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public nuint SallocxSuppressed()
    {
        nuint total = 0;
        for (int i = 0; i < Operations; i++)
        {
            total += _sallocxSuppressed(_block, 0);
        }

        return total;
    }
}
