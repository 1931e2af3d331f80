using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

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
        nint library = JemExports.Library;
        _malloc = (delegate* unmanaged<nuint, void*>)NativeLibrary.GetExport(library, "je_malloc");
        _free = (delegate* unmanaged<void*, void>)NativeLibrary.GetExport(library, "je_free");
        _mallocSuppressed = (delegate* unmanaged[SuppressGCTransition]<nuint, void*>)_malloc;
        _freeSuppressed = (delegate* unmanaged[SuppressGCTransition]<void*, void>)_free;
        _sallocx = (delegate* unmanaged<void*, int, nuint>)NativeLibrary.GetExport(library, "je_sallocx");
        _sallocxSuppressed = (delegate* unmanaged[SuppressGCTransition]<void*, int, nuint>)_sallocx;
        _block = Jem.Malloc((nuint)Size);
    }

    /// <summary>Checks a jemalloc allocate-and-free row (it gives back all it takes), then frees the size queries' block.</summary>
    [GlobalCleanup(Targets = [nameof(MallocFreeLibraryImport), nameof(MallocFreeFunctionPointer), nameof(MallocFreeSuppressed)])]
    public void CheckJemMallocFree()
    {
        try
        {
            // The suppressed-transition pointers call the same exports: a block from each is a jemalloc block of at least Size bytes.
            void* block = _mallocSuppressed((nuint)Size);
            nuint usable = BrokenResultSwitch.Corrupt(Jem.MallocUsableSize(block));
            _freeSuppressed(block);
            string name = $"micro GC transition [{Size} B]: malloc + free";
            ResultChecks.Check(name, block != null && usable >= (nuint)Size, $"a block holds at least {Size} bytes (usable size {usable})");
            MicroChecks.FreesEverything(name, MallocFreeLibraryImport);
            MicroChecks.FreesEverything(name, MallocFreeFunctionPointer);
            MicroChecks.FreesEverything(name, MallocFreeSuppressed);
        }
        finally
        {
            Jem.Free(_block);
        }
    }

    /// <summary>Checks the glibc row: a block can hold <see cref="Size"/> bytes written and read back.</summary>
    [GlobalCleanup(Target = nameof(MallocFreeGlibc))]
    public void CheckGlibc()
    {
        try
        {
            byte* block = (byte*)NativeMemory.Alloc((nuint)Size);
            var bytes = new Span<byte>(block, Size);
            bytes.Fill(0x5A);
            BrokenResultSwitch.Corrupt(bytes);
            bool right = block != null && !bytes.ContainsAnyExcept((byte)0x5A);
            NativeMemory.Free(block);
            ResultChecks.Check($"micro GC transition [{Size} B]: glibc malloc + free", right, $"a block holds the {Size} bytes written");
        }
        finally
        {
            Jem.Free(_block);
        }
    }

    /// <summary>Checks a size-query row: its total is the block's usable size (<c>je_malloc_usable_size</c>) times the calls, then frees the block.</summary>
    [GlobalCleanup(Targets = [nameof(SallocxTransition), nameof(SallocxLibrary), nameof(SallocxSuppressed)])]
    public void CheckSallocx()
    {
        try
        {
            nuint expected = Jem.MallocUsableSize(_block) * Operations;
            string name = $"micro GC transition [{Size} B]: sallocx";
            ResultChecks.Equal(name, expected, BrokenResultSwitch.Corrupt(SallocxTransition()), "the total of the size queries (transition)");
            ResultChecks.Equal(name, expected, SallocxLibrary(), "the total of the size queries (library)");
            ResultChecks.Equal(name, expected, SallocxSuppressed(), "the total of the size queries (suppressed)");
        }
        finally
        {
            Jem.Free(_block);
        }
    }

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
