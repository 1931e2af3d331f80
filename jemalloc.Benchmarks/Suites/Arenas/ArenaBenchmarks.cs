using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;
using static jemalloc.Benchmarks.Infrastructure.SmallObjectWorkload;

namespace jemalloc.Benchmarks.Suites.Arenas;

/// <summary>
/// The <c>arena</c> suite: a working set of many small objects thrown away at once. Each operation
/// makes <see cref="Parameter"/> allocations of 16 to 1024 bytes, writes to each, reads them all
/// back, then gets rid of them: with one <see cref="JemArena.Reset"/>, by freeing each one (in a
/// <see cref="JemArena"/>, with jemalloc's default arena and thread cache, with the C library), or by
/// dropping managed arrays for the garbage collector.
/// </summary>
/// <remarks>
/// The managed baseline pays for the collections that happen during the operation (its objects
/// stay alive until its end, so they are promoted), but not for a final collection of the dropped
/// arrays: BenchmarkDotNet collects between iterations, outside the measurement.
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public unsafe class ArenaBenchmarks
{
    /// <summary>The sizes the allocations are drawn from.</summary>
    public static IReadOnlyList<int> AllocationSizes { get; } = [16, 24, 32, 48, 64, 96, 128, 256, 512, 1024];

    private int[] _sizes = [];
    private nint[] _pointers = [];
    private byte[]?[] _arrays = [];
    private FixedBuffer<byte>[] _buffers = [];
    private JemArena? _arena;
    private long _expected;
    private long _lastResult;

    /// <summary>The allocation counts given on the command line.</summary>
    public static IEnumerable<long> Counts => SuiteParameters.Sizes;

    /// <summary>Allocations per operation.</summary>
    [ParamsSource(nameof(Counts))]
    public long Parameter { get; set; }

    /// <summary>Draws the sizes (the same sequence every run), the expected result, and creates the arena.</summary>
    [GlobalSetup]
    public void Setup()
    {
        int count = checked((int)Parameter);
        _sizes = SmallObjectWorkload.DrawSizes(AllocationSizes, count, seed: 4096, out _expected);
        _pointers = new nint[count];
        _arrays = new byte[]?[count];
        _buffers = new FixedBuffer<byte>[count];
        _arena = new JemArena();
    }

    /// <summary>Managed arrays, dropped together for the garbage collector.</summary>
    [Benchmark(Baseline = true, Description = "new byte[], dropped")]
    public long ManagedArrays()
    {
        return _lastResult = SmallObjectWorkload.AllocateAndDropManagedArrays(_sizes, _arrays);
    }

    /// <summary>Raw memory in a <see cref="JemArena"/>, all freed by one reset.</summary>
    [Benchmark(Description = "JemArena.Allocate, one Reset")]
    public long ArenaReset()
    {
        JemArena arena = _arena!;
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            pointers[i] = Touch((byte*)arena.Allocate((nuint)sizes[i]), sizes[i], i);
        }

        long total = Sum(pointers, sizes);
        arena.Reset();
        return _lastResult = total;
    }

    /// <summary>Raw memory in a <see cref="JemArena"/>, freed one by one.</summary>
    [Benchmark(Description = "JemArena.Allocate, Free each")]
    public long ArenaFreeEach()
    {
        JemArena arena = _arena!;
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            pointers[i] = Touch((byte*)arena.Allocate((nuint)sizes[i]), sizes[i], i);
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            arena.Free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>jemalloc's default arena with its thread cache, freed one by one.</summary>
    [Benchmark(Description = "Jem.Malloc, Free each")]
    public long JemMallocFreeEach()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            pointers[i] = Touch((byte*)Jem.Malloc((nuint)sizes[i]), sizes[i], i);
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            Jem.Free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>The C library's allocator, freed one by one.</summary>
    [Benchmark(Description = "NativeMemory.Alloc (C malloc), Free each")]
    public long CMallocFreeEach()
    {
        int[] sizes = _sizes;
        nint[] pointers = _pointers;
        for (int i = 0; i < sizes.Length; i++)
        {
            pointers[i] = Touch((byte*)NativeMemory.Alloc((nuint)sizes[i]), sizes[i], i);
        }

        long total = Sum(pointers, sizes);
        for (int i = 0; i < pointers.Length; i++)
        {
            NativeMemory.Free((void*)pointers[i]);
        }

        return _lastResult = total;
    }

    /// <summary>Safe <see cref="FixedBuffer{T}"/>s created in the arena, all invalidated and freed by one reset.</summary>
    [Benchmark(Description = "FixedBuffer<byte> in JemArena, one Reset")]
    public long BuffersInArenaReset()
    {
        JemArena arena = _arena!;
        int[] sizes = _sizes;
        FixedBuffer<byte>[] buffers = _buffers;
        for (int i = 0; i < sizes.Length; i++)
        {
            FixedBuffer<byte> buffer = arena.CreateBuffer<byte>(sizes[i]);
            buffer[0] = (byte)i;
            buffer[sizes[i] - 1] = (byte)i;
            buffers[i] = buffer;
        }

        long total = SumBuffers(buffers);
        arena.Reset();
        return _lastResult = total;
    }

    /// <summary>Safe <see cref="FixedBuffer{T}"/>s with the default options, freed one by one.</summary>
    [Benchmark(Description = "FixedBuffer<byte>, Free each")]
    public long BuffersFreeEach()
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

        long total = SumBuffers(buffers);
        for (int i = 0; i < buffers.Length; i++)
        {
            buffers[i].Free();
        }

        return _lastResult = total;
    }

    /// <summary>Checks the last operation's result and destroys the arena.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        try
        {
            ResultChecks.Equal($"arena x{Parameter}", _expected, BrokenResultSwitch.Corrupt(_lastResult), "sum of sizes and bytes written in the last operation");
            ResultChecks.Equal($"arena x{Parameter}", 0L, _arena!.UsedBytes, "bytes left in use in the arena");
        }
        finally
        {
            _arena?.Dispose();
        }
    }

    private static long SumBuffers(FixedBuffer<byte>[] buffers)
    {
        long total = 0;
        for (int i = 0; i < buffers.Length; i++)
        {
            total += buffers[i].Length + buffers[i][buffers[i].Length - 1];
        }

        return total;
    }
}
