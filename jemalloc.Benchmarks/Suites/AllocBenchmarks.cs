using System.Buffers;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;
using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites;

/// <summary>
/// The <c>alloc</c> suite: small-object throughput. Each operation makes <see cref="Parameter"/>
/// allocations of sizes drawn from {64, 96, 150, 200, 400, 1024, 4096} bytes, writes to each, keeps
/// them all alive, then frees them all: jemalloc against the C library's <c>malloc</c>
/// (<see cref="NativeMemory.Alloc(nuint)"/>), <c>new byte[]</c> and <see cref="ArrayPool{T}"/>.
/// </summary>
public unsafe class AllocBenchmarks
{
    /// <summary>The sizes the allocations are drawn from.</summary>
    public static IReadOnlyList<int> AllocationSizes { get; } = [64, 96, 150, 200, 400, 1024, 4096];

    private int[] _sizes = [];
    private nint[] _pointers = [];
    private byte[]?[] _arrays = [];
    private FixedBuffer<byte>[] _buffers = [];
    private long _expected;
    private long _lastResult;

    /// <summary>The sizes given on the command line.</summary>
    public static IEnumerable<long> Counts => SuiteParameters.Sizes;

    /// <summary>Allocations per operation.</summary>
    [ParamsSource(nameof(Counts))]
    public long Parameter { get; set; }

    /// <summary>Draws the allocation sizes (the same sequence in every process) and the expected result.</summary>
    [GlobalSetup]
    public void Setup()
    {
        int count = checked((int)Parameter);
        _sizes = SmallObjectWorkload.DrawSizes(AllocationSizes, count, seed: 2048, out _expected);
        _pointers = new nint[count];
        _arrays = new byte[]?[count];
        _buffers = new FixedBuffer<byte>[count];
    }

    /// <summary>The C library's allocator, as .NET exposes it.</summary>
    [Benchmark(Baseline = true, Description = "NativeMemory.Alloc/Free (C malloc)")]
    public long NativeMemoryAllocFree()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte* memory = (byte*)NativeMemory.Alloc((nuint)sizes[i]);
            Touch(memory, sizes[i], i);
            pointers[i] = (nint)memory;
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            NativeMemory.Free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>jemalloc's <c>malloc</c>/<c>free</c>.</summary>
    [Benchmark(Description = "Jem.Malloc/Free")]
    public long JemMallocFree()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte* memory = (byte*)Jem.Malloc((nuint)sizes[i]);
            Touch(memory, sizes[i], i);
            pointers[i] = (nint)memory;
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            Jem.Free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>jemalloc's <c>mallocx</c> with the sized free export (<c>sdallocx</c>), which skips the size lookup.</summary>
    [Benchmark(Description = "je_mallocx/je_sdallocx")]
    public long JemSizedFree()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte* memory = (byte*)Jem.Mallocx((nuint)sizes[i]);
            Touch(memory, sizes[i], i);
            pointers[i] = (nint)memory;
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            JemExports.Sdallocx((void*)pointers[i], (nuint)sizes[i], 0);
        }

        return _lastResult = total;
    }

    /// <summary>mimalloc 2.0's <c>mi_malloc</c>/<c>mi_free</c> (left out of the run, with a message, where the library is missing).</summary>
    [Benchmark(Description = "mimalloc mi_malloc/mi_free")]
    public long MimallocMallocFree()
    {
        if (!Mimalloc.IsAvailable)
        {
            throw new InvalidOperationException(Mimalloc.MissingMessage);
        }

        delegate* unmanaged<nuint, void*> malloc = Mimalloc.Malloc;
        delegate* unmanaged<void*, void> free = Mimalloc.Free;
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte* memory = (byte*)malloc((nuint)sizes[i]);
            Touch(memory, sizes[i], i);
            pointers[i] = (nint)memory;
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>
    /// What a safe <see cref="FixedBuffer{T}"/> costs over the raw pair it wraps: created (zeroed) and
    /// freed one by one with its checked handle; compare with "je_malloc + clear/je_sdallocx", the
    /// native calls it makes.
    /// </summary>
    [Benchmark(Description = "new FixedBuffer<byte> + Free")]
    public long FixedBufferCreateFree()
    {
        int[] sizes = _sizes;
        FixedBuffer<byte>[] buffers = _buffers;
        for (int i = 0; i < sizes.Length; i++)
        {
            var buffer = new FixedBuffer<byte>(sizes[i]);
            buffer[0] = (byte)i;
            buffer[sizes[i] - 1] = (byte)i;
            buffers[i] = buffer;
        }

        long total = 0;
        for (int i = 0; i < buffers.Length; i++)
        {
            total += sizes[i] + buffers[i][sizes[i] - 1];
        }

        for (int i = 0; i < buffers.Length; i++)
        {
            buffers[i].Free();
        }

        return _lastResult = total;
    }

    /// <summary>The native calls a <see cref="FixedBuffer{T}"/> of the default options makes, with its zeroing: <c>malloc</c>, clear, the <c>sdallocx</c> export.</summary>
    [Benchmark(Description = "je_malloc + clear/je_sdallocx")]
    public long JemSizedFreeCleared()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte* memory = (byte*)Jem.Malloc((nuint)sizes[i]);
            NativeMemory.Clear(memory, (nuint)sizes[i]);
            Touch(memory, sizes[i], i);
            pointers[i] = (nint)memory;
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            JemExports.Sdallocx((void*)pointers[i], (nuint)sizes[i], 0);
        }

        return _lastResult = total;
    }

    /// <summary>Managed arrays, dropped together for the garbage collector.</summary>
    [Benchmark(Description = "new byte[]")]
    public long ManagedArrays()
    {
        return _lastResult = SmallObjectWorkload.AllocateAndDropManagedArrays(_sizes, _arrays);
    }

    /// <summary>Arrays rented from the shared pool and all returned.</summary>
    [Benchmark(Description = "ArrayPool<byte>.Shared")]
    public long PooledArrays()
    {
        int[] sizes = _sizes;
        byte[]?[] arrays = _arrays;
        long total = 0;
        for (int i = 0; i < sizes.Length; i++)
        {
            byte[] array = ArrayPool<byte>.Shared.Rent(sizes[i]);
            array[0] = (byte)i;
            array[sizes[i] - 1] = (byte)i;
            arrays[i] = array;
        }

        for (int i = 0; i < arrays.Length; i++)
        {
            total += sizes[i] + arrays[i]![sizes[i] - 1];
            ArrayPool<byte>.Shared.Return(arrays[i]!);
        }

        Array.Clear(arrays);
        return _lastResult = total;
    }

    /// <summary>Checks the last operation's result.</summary>
    [GlobalCleanup]
    public void Cleanup() =>
        ResultChecks.Equal($"alloc x{Parameter}", _expected, BrokenResultSwitch.Corrupt(_lastResult), "sum of sizes and bytes written in the last operation");
}
