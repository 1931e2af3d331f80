using System.Diagnostics.CodeAnalysis;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites;

/// <summary>
/// The <c>malloc</c> suite: raw jemalloc memory (<see cref="Jem.Malloc"/>/<see cref="Jem.Free"/>)
/// against managed arrays of <typeparamref name="T"/>. <c>--create</c> and <c>--fill</c> take element
/// counts; <c>--fragment</c> takes the number of rounds of the allocation pattern.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
public unsafe class MallocBenchmarks<T> where T : unmanaged
{
    // The fragmentation pattern: every round allocates arrays of 128 KiB..240 KiB (all on the Large
    // Object Heap), keeps some alive for a few rounds and frees the rest, then asks for blocks a
    // little bigger than the holes it just made.
    private const int PerRound = 8;
    private const int KeptRounds = 4;
    private const int BaseBytes = 128 * 1024;
    private const int StepBytes = 16 * 1024;
    private const int CompactEveryRounds = 10;

    private T[]? _managed;
    private T* _native;
    private long _expected;
    private long _lastResult;
    private string _running = "";

    /// <summary>The sizes given on the command line.</summary>
    [SuppressMessage("Design", "CA1000:Do not declare static members on generic types", Justification = "BenchmarkDotNet reads [ParamsSource] from the benchmark class itself.")]
    public static IEnumerable<long> Sizes => SuiteParameters.Sizes;

    /// <summary>Element count (create, fill) or rounds (fragment).</summary>
    [ParamsSource(nameof(Sizes))]
    public long Parameter { get; set; }

    private int Length => checked((int)Parameter);

    private nuint Bytes => (nuint)Parameter * (nuint)sizeof(T);

    private static T Value => FillValue.Of<T>();

    // ---------------------------------------------------------------- create

    /// <summary>Sets up nothing: the create benchmarks allocate their own memory.</summary>
    [GlobalSetup(Targets = [nameof(CreateManaged), nameof(CreateJem), nameof(CreateJemZeroed)])]
    public void SetupCreate() => _running = "create";

    /// <summary>Allocates a managed array (zeroed by the runtime), writes its ends and drops it.</summary>
    [Benchmark(Baseline = true, Description = "Create a managed array")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateManaged()
    {
        var array = new T[Length];
        array[0] = Value;
        array[^1] = Value;
        _lastResult = array.Length;
    }

    /// <summary>Allocates uninitialized memory with <c>je_malloc</c>, writes its ends and frees it.</summary>
    [Benchmark(Description = "Create with Jem.Malloc (uninitialized)")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateJem()
    {
        T* memory = (T*)Jem.Malloc(Bytes);
        if (memory == null)
        {
            NativeMemoryError.Throw("je_malloc", Bytes);
        }

        memory[0] = Value;
        memory[Length - 1] = Value;
        _lastResult = Length;
        Jem.Free(memory);
    }

    /// <summary>Allocates zeroed memory (like a managed array) with <c>je_mallocx</c>, writes its ends and frees it.</summary>
    [Benchmark(Description = "Create with Jem mallocx zeroed (like new T[])")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateJemZeroed()
    {
        T* memory = (T*)Jem.Mallocx(Bytes, MallocxFlags.Zero);
        if (memory == null)
        {
            NativeMemoryError.Throw("je_mallocx", Bytes);
        }

        memory[0] = Value;
        memory[Length - 1] = Value;
        _lastResult = Length;
        Jem.Sdallocx(memory, Bytes, MallocxFlags.Zero);
    }

    // ---------------------------------------------------------------- fill

    /// <summary>Allocates and pages in the managed array (only it, so the two sides are never alive together).</summary>
    [GlobalSetup(Target = nameof(FillManaged))]
    public void SetupFillManaged()
    {
        _running = "fill";
        _managed = new T[Length];
        _managed.AsSpan().Clear();
    }

    /// <summary>Allocates and pages in the jemalloc memory.</summary>
    [GlobalSetup(Targets = [nameof(FillJem), nameof(FillMachineLimit)])]
    public void SetupFillNative()
    {
        _running = "fill";
        _native = (T*)Jem.Malloc(Bytes);
        if (_native == null)
        {
            NativeMemoryError.Throw("je_malloc", Bytes);
        }

        // Page everything in first: the fill benchmarks measure writing, not page faults.
        NativeMemory.Clear(_native, Bytes);
    }

    /// <summary>Fills the managed array with <see cref="Span{T}.Fill"/>.</summary>
    [Benchmark(Baseline = true, Description = "Span<T>.Fill on a managed array")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillManaged() => _managed.AsSpan().Fill(Value);

    /// <summary>Fills jemalloc memory with <see cref="Span{T}.Fill"/>.</summary>
    [Benchmark(Description = "Span<T>.Fill on Jem.Malloc memory")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillJem() => new Span<T>(_native, Length).Fill(Value);

    /// <summary>The machine's limit: the C library's <c>memset</c> over the same paged-in bytes.</summary>
    [Benchmark(Description = "Machine limit: memset of paged-in memory")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillMachineLimit() => NativeMemory.Fill(_native, Bytes, FillValue.Pattern);

    /// <summary>Checks the filled managed array and drops it.</summary>
    [GlobalCleanup(Target = nameof(FillManaged))]
    public void CleanupFillManaged()
    {
        ResultChecks.Check($"malloc fill {typeof(T).Name}[{Parameter}]", !MemoryMarshal.AsBytes(_managed.AsSpan()).ContainsAnyExcept(FillValue.Pattern),
            "the managed array holds the fill value everywhere");
        _managed = null;
        Collect();
    }

    /// <summary>Checks the filled jemalloc memory and frees it.</summary>
    [GlobalCleanup(Targets = [nameof(FillJem), nameof(FillMachineLimit)])]
    public void CleanupFillNative()
    {
        try
        {
            bool filled = true;
            for (nuint offset = 0; offset < Bytes && filled; offset += int.MaxValue)
            {
                var part = new ReadOnlySpan<byte>((byte*)_native + offset, (int)Math.Min(Bytes - offset, int.MaxValue));
                filled = !part.ContainsAnyExcept(FillValue.Pattern);
            }

            ResultChecks.Check($"malloc fill {typeof(T).Name}[{Parameter}]", filled, "the jemalloc memory holds the fill value everywhere");
        }
        finally
        {
            Jem.Free(_native);
            _native = null;
        }
    }

    // ---------------------------------------------------------------- fragment

    /// <summary>Computes the result every pattern must produce.</summary>
    [GlobalSetup(Targets = [nameof(ManagedNoFragmentation), nameof(ManagedFragmentation), nameof(ManagedFragmentationCompacted), nameof(JemNoFragmentation), nameof(JemFragmentation)])]
    public void SetupFragment()
    {
        _running = "fragment";
        long expected = 0;
        for (long round = 0; round < Parameter; round++)
        {
            for (int i = 0; i < PerRound; i++)
            {
                // Each round makes 3 * PerRound allocations; every one returns its element count.
                expected += ElementsFor(BaseBytes + (i * StepBytes)) * 2L + ElementsFor(BaseBytes + ((i + 2) * StepBytes));
            }
        }

        _expected = expected;
    }

    /// <summary>The control: the same number of Large Object Heap allocations, all of one size, each fitting the space the last one freed.</summary>
    [Benchmark(Baseline = true, Description = "LOH pattern that does not fragment")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedNoFragmentation()
    {
        long total = 0;
        var kept = new T[KeptRounds * PerRound][];
        for (long round = 0; round < Parameter; round++)
        {
            for (int i = 0; i < PerRound; i++)
            {
                // Same element total as the fragmenting pattern, split into equal blocks.
                int elements = ElementsFor(BaseBytes + (i * StepBytes));
                kept[(round % KeptRounds * PerRound) + i] = Touch(new T[elements], ref total);
                Touch(new T[elements], ref total);
                Touch(new T[ElementsFor(BaseBytes + ((i + 2) * StepBytes))], ref total);
            }
        }

        _lastResult = total;
        return total;
    }

    /// <summary>Long-lived arrays with holes between them, then requests a little bigger than the holes.</summary>
    [Benchmark(Description = "LOH pattern that fragments")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedFragmentation() => _lastResult = ManagedPattern(compact: false);

    /// <summary>The fragmenting pattern with a compacting full collection of the Large Object Heap every few rounds.</summary>
    [Benchmark(Description = "LOH pattern that fragments, with LOH compaction")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedFragmentationCompacted() => _lastResult = ManagedPattern(compact: true);

    /// <summary>The control on jemalloc: equal-size blocks, each freed before the next is asked for.</summary>
    [Benchmark(Description = "jemalloc pattern that does not fragment")]
    [BenchmarkCategory(Categories.Fragment)]
    public long JemNoFragmentation()
    {
        long total = 0;
        var kept = new nint[KeptRounds * PerRound];
        var keptBytes = new nuint[KeptRounds * PerRound];
        try
        {
            for (long round = 0; round < Parameter; round++)
            {
                for (int i = 0; i < PerRound; i++)
                {
                    nuint bytes = BytesFor(BaseBytes + (i * StepBytes));
                    ReplaceKept(kept, keptBytes, (int)(round % KeptRounds * PerRound) + i, bytes, ref total);
                    FreeNative(AllocateNative(bytes, ref total), bytes);
                    nuint bigger = BytesFor(BaseBytes + ((i + 2) * StepBytes));
                    FreeNative(AllocateNative(bigger, ref total), bigger);
                }
            }
        }
        finally
        {
            FreeAllNative(kept, keptBytes);
        }

        return _lastResult = total;
    }

    /// <summary>The fragmenting pattern on jemalloc.</summary>
    [Benchmark(Description = "jemalloc pattern that fragments")]
    [BenchmarkCategory(Categories.Fragment)]
    public long JemFragmentation()
    {
        long total = 0;
        var kept = new nint[KeptRounds * PerRound];
        var keptBytes = new nuint[KeptRounds * PerRound];
        var holes = new nint[PerRound];
        var holeBytes = new nuint[PerRound];
        try
        {
            for (long round = 0; round < Parameter; round++)
            {
                for (int i = 0; i < PerRound; i++)
                {
                    // Interleave a long-lived block and a short-lived one, so freeing the short-lived ones leaves holes.
                    nuint bytes = BytesFor(BaseBytes + (i * StepBytes));
                    ReplaceKept(kept, keptBytes, (int)(round % KeptRounds * PerRound) + i, bytes, ref total);
                    holes[i] = AllocateNative(bytes, ref total);
                    holeBytes[i] = bytes;
                }

                FreeAllNative(holes, holeBytes);

                for (int i = 0; i < PerRound; i++)
                {
                    nuint bigger = BytesFor(BaseBytes + ((i + 2) * StepBytes));
                    FreeNative(AllocateNative(bigger, ref total), bigger);
                }
            }
        }
        finally
        {
            FreeAllNative(kept, keptBytes);
        }

        return _lastResult = total;
    }

    /// <summary>Checks that the pattern made and touched every allocation.</summary>
    [GlobalCleanup(Targets = [nameof(ManagedNoFragmentation), nameof(ManagedFragmentation), nameof(ManagedFragmentationCompacted), nameof(JemNoFragmentation), nameof(JemFragmentation)])]
    public void CleanupFragment()
    {
        ResultChecks.Equal($"malloc fragment {typeof(T).Name} x{Parameter}", _expected, _lastResult, "elements allocated and touched by the last operation");
        Collect();
    }

    /// <summary>Checks the create benchmarks' last operation.</summary>
    [GlobalCleanup(Targets = [nameof(CreateManaged), nameof(CreateJem), nameof(CreateJemZeroed)])]
    public void CleanupCreate()
    {
        ResultChecks.Equal($"malloc {_running} {typeof(T).Name}[{Parameter}]", Parameter, _lastResult, "elements created by the last operation");
        Collect();
    }

    private long ManagedPattern(bool compact)
    {
        long total = 0;
        var kept = new T[KeptRounds * PerRound][];
        var holes = new T[PerRound][];
        for (long round = 0; round < Parameter; round++)
        {
            for (int i = 0; i < PerRound; i++)
            {
                int elements = ElementsFor(BaseBytes + (i * StepBytes));
                kept[(round % KeptRounds * PerRound) + i] = Touch(new T[elements], ref total);
                holes[i] = Touch(new T[elements], ref total);
            }

            Array.Clear(holes);
            for (int i = 0; i < PerRound; i++)
            {
                Touch(new T[ElementsFor(BaseBytes + ((i + 2) * StepBytes))], ref total);
            }

            if (compact && round % CompactEveryRounds == CompactEveryRounds - 1)
            {
                GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
                GC.Collect();
            }
        }

        GC.KeepAlive(kept);
        return total;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T[] Touch(T[] array, ref long total)
    {
        array[0] = Value;
        array[^1] = Value;
        total += array.Length;
        return array;
    }

    private static nint AllocateNative(nuint bytes, ref long total)
    {
        T* memory = (T*)Jem.Malloc(bytes);
        if (memory == null)
        {
            NativeMemoryError.Throw("je_malloc", bytes);
        }

        long elements = (long)(bytes / (nuint)sizeof(T));
        memory[0] = Value;
        memory[elements - 1] = Value;
        total += elements;
        return (nint)memory;
    }

    private static void FreeNative(nint memory, nuint bytes)
    {
        if (memory != 0)
        {
            Jem.Sdallocx((void*)memory, bytes, 0);
        }
    }

    // The long-lived blocks form a ring of KeptRounds rounds: a slot's block is freed when the slot comes round again.
    private static void ReplaceKept(nint[] kept, nuint[] keptBytes, int slot, nuint bytes, ref long total)
    {
        FreeNative(kept[slot], keptBytes[slot]);
        kept[slot] = AllocateNative(bytes, ref total);
        keptBytes[slot] = bytes;
    }

    private static void FreeAllNative(nint[] blocks, nuint[] blockBytes)
    {
        for (int i = 0; i < blocks.Length; i++)
        {
            FreeNative(blocks[i], blockBytes[i]);
        }
    }

    private static int ElementsFor(int bytes) => bytes / sizeof(T);

    private static nuint BytesFor(int bytes) => (nuint)ElementsFor(bytes) * (nuint)sizeof(T);

    /// <summary>
    /// A full, compacting collection that also gives the freed memory back to the operating system
    /// (<see cref="GCCollectionMode.Aggressive"/>), so the next benchmark starts without this one's
    /// garbage: a multi-gigabyte managed array must be gone before a multi-gigabyte native one is made.
    /// </summary>
    internal static void Collect()
    {
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
    }
}
