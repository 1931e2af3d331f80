using System.Diagnostics.CodeAnalysis;
using System.Runtime;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites;

/// <summary>
/// The <c>malloc</c> suite: raw jemalloc memory (<see cref="Jem.Malloc"/>/<see cref="Jem.Free"/>)
/// against managed arrays of <typeparamref name="T"/>. <c>--create</c> and <c>--fill</c> take element
/// counts; <c>--fragment</c> takes the number of rounds of the allocation pattern.
/// </summary>
/// <remarks>
/// <para>
/// <c>--fragment</c>: every round allocates arrays of 128 KiB..240 KiB (all on the Large Object
/// Heap), keeps some alive for <see cref="KeptRounds"/> rounds and frees the rest, then asks for
/// blocks a little bigger than the holes it just made; the control pattern makes the same
/// allocations, of the same sizes, but frees each short-lived block before the next is asked for.
/// Both sides do the same work: the managed arrays come from
/// <see cref="GC.AllocateUninitializedArray{T}(int, bool)"/> (not zeroed, like
/// <see cref="Jem.Malloc"/>) and every element of every block is written, on both sides.
/// </para>
/// <para>
/// Fragmentation itself is measured by running the pattern once more after the timed run and
/// sampling after every round: the bytes the pattern holds alive, against the heap's footprint
/// (managed: <see cref="GCMemoryInfo.HeapSizeBytes"/> and <see cref="GCMemoryInfo.FragmentedBytes"/>
/// as of the most recent collection; jemalloc: <c>stats.active</c>, and <c>stats.active</c> minus
/// <c>stats.allocated</c>, after an <c>epoch</c> refresh), and the process's resident memory; each
/// relative to the values just before the pattern started. <see cref="FragmentationColumns"/> shows them.
/// </para>
/// </remarks>
/// <typeparam name="T">The element type.</typeparam>
public unsafe class MallocBenchmarks<T> where T : unmanaged
{
    // The fragmentation pattern: every round allocates arrays of 128 KiB..240 KiB (all on the Large
    // Object Heap), keeps some alive for a few rounds and frees the rest, then asks for blocks a
    // little bigger than the holes it just made.
    private const int PerRound = 8;

    /// <summary>How many rounds a long-lived block stays alive.</summary>
    public const int KeptRounds = 4;
    private const int BaseBytes = 128 * 1024;
    private const int StepBytes = 16 * 1024;
    private const int CompactEveryRounds = 10;

    private T[]? _managed;
    private T* _native;
    private long _expected;
    private long _lastResult;
    private FragmentationSampler? _sampler;

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

    // Each create keeps what it made until the next operation frees it (first, before allocating: the
    // same work per operation), so the cleanup checks what the last timed operation created.

    /// <summary>Drops the previous operation's array, allocates a managed array (zeroed by the runtime) and writes its first and last elements.</summary>
    [Benchmark(Baseline = true, Description = "new T[] (zeroed by the runtime), write both ends")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateManaged()
    {
        _managed = null;
        var array = new T[Length];
        array[0] = Value;
        array[^1] = Value;
        _managed = array;
    }

    /// <summary>Frees the previous operation's block, allocates uninitialized memory with <c>je_malloc</c> and writes its first and last elements.</summary>
    [Benchmark(Description = "Jem.Malloc (uninitialized), write both ends, Jem.Free")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateJem()
    {
        Jem.Free(_native);
        _native = null;
        T* memory = (T*)Jem.Malloc(Bytes);
        if (memory == null)
        {
            NativeMemoryError.Throw("je_malloc", Bytes);
        }

        memory[0] = Value;
        memory[Length - 1] = Value;
        _native = memory;
    }

    /// <summary>Frees the previous operation's block, allocates zeroed memory (like a managed array) with <c>je_mallocx</c> and writes its first and last elements.</summary>
    [Benchmark(Description = "Jem.Mallocx(Zero) (zeroed, like new T[]), write both ends, Jem.Sdallocx")]
    [BenchmarkCategory(Categories.Create)]
    public void CreateJemZeroed()
    {
        if (_native != null)
        {
            Jem.Sdallocx(_native, Bytes, MallocxFlags.Zero);
            _native = null;
        }

        T* memory = (T*)Jem.Mallocx(Bytes, MallocxFlags.Zero);
        if (memory == null)
        {
            NativeMemoryError.Throw("je_mallocx", Bytes);
        }

        memory[0] = Value;
        memory[Length - 1] = Value;
        _native = memory;
    }

    /// <summary>Checks the array the last timed operation created: both ends hold the value, every other element is zero.</summary>
    [GlobalCleanup(Target = nameof(CreateManaged))]
    public void CleanupCreateManaged()
    {
        try
        {
            CheckCreated("managed array", _managed.AsSpan(), zeroed: true);
        }
        finally
        {
            _managed = null;
            Collect();
        }
    }

    /// <summary>Checks the block the last timed uninitialized create made: its usable size covers the request and both ends hold the value.</summary>
    [GlobalCleanup(Target = nameof(CreateJem))]
    public void CleanupCreateJem()
    {
        try
        {
            // The elements between the ends are uninitialized: nothing is promised about them.
            string name = $"malloc create {typeof(T).Name}[{Parameter}]: Jem.Malloc";
            ResultChecks.Check(name, _native != null, "the last timed operation left the block it created");
            ResultChecks.Check(name, Jem.MallocUsableSize(_native) >= Bytes, $"the block holds at least {Bytes:N0} bytes");
            CheckCreated("Jem.Malloc", new Span<T>(_native, Length), zeroed: false);
        }
        finally
        {
            Jem.Free(_native);
            _native = null;
        }
    }

    /// <summary>Checks the block the last timed zeroed create made: both ends hold the value, every other element is zero.</summary>
    [GlobalCleanup(Target = nameof(CreateJemZeroed))]
    public void CleanupCreateJemZeroed()
    {
        try
        {
            ResultChecks.Check($"malloc create {typeof(T).Name}[{Parameter}]: Jem.Mallocx(Zero)", _native != null, "the last timed operation left the block it created");
            CheckCreated("Jem.Mallocx(Zero)", new Span<T>(_native, Length), zeroed: true);
        }
        finally
        {
            Jem.Free(_native);
            _native = null;
        }
    }

    private void CheckCreated(string what, Span<T> created, bool zeroed)
    {
        BrokenResultSwitch.Corrupt(created);
        string name = $"malloc create {typeof(T).Name}[{Parameter}]: {what}";
        ResultChecks.Equal(name, Length, created.Length, "elements created (by the last timed operation)");
        bool endsHoldValue = created[0].Equals(Value) && created[^1].Equals(Value);
        ResultChecks.Check(name, endsHoldValue, "the first and last elements hold the value written");
        if (zeroed && created.Length > 2)
        {
            ResultChecks.Check(name, !MemoryMarshal.AsBytes(created[1..^1]).ContainsAnyExcept((byte)0), "every other element is zero");
        }
    }

    // ---------------------------------------------------------------- fill

    /// <summary>Allocates and pages in the managed array (only it, so the two sides are never alive together).</summary>
    [GlobalSetup(Target = nameof(FillManaged))]
    public void SetupFillManaged()
    {
        _managed = new T[Length];
        _managed.AsSpan().Clear();
    }

    /// <summary>Allocates and pages in the jemalloc memory.</summary>
    [GlobalSetup(Targets = [nameof(FillJem), nameof(FillMachineLimit)])]
    public void SetupFillNative()
    {
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
        BrokenResultSwitch.Corrupt(_managed.AsSpan());
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
            BrokenResultSwitch.Corrupt(new Span<T>(_native, Length));
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

    /// <summary>Computes the elements every pattern writes per operation.</summary>
    [GlobalSetup(Targets = [nameof(ManagedNoFragmentation), nameof(ManagedFragmentation), nameof(ManagedFragmentationCompacted), nameof(JemNoFragmentation), nameof(JemFragmentation)])]
    public void SetupFragment()
    {
        long perRound = 0;
        for (int i = 0; i < PerRound; i++)
        {
            // Each round makes 3 * PerRound allocations and writes every element of each.
            perRound += (ElementsFor(BaseBytes + (i * StepBytes)) * 2L) + ElementsFor(BaseBytes + ((i + 2) * StepBytes));
        }

        _expected = perRound * Parameter;
    }

    /// <summary>The control on the managed heap: each short-lived array is dropped before the next is asked for.</summary>
    [Benchmark(Baseline = true, Description = "Managed (LOH): pattern that does not fragment")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedNoFragmentation() => _lastResult = RunPattern(new ManagedHeap(), fragmenting: false, compact: false);

    /// <summary>Long-lived arrays with holes between them, then requests a little bigger than the holes.</summary>
    [Benchmark(Description = "Managed (LOH): pattern that fragments")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedFragmentation() => _lastResult = RunPattern(new ManagedHeap(), fragmenting: true, compact: false);

    /// <summary>The fragmenting pattern with a compacting full collection of the Large Object Heap every few rounds.</summary>
    [Benchmark(Description = "Managed (LOH): pattern that fragments, LOH compaction every 10 rounds")]
    [BenchmarkCategory(Categories.Fragment)]
    public long ManagedFragmentationCompacted() => _lastResult = RunPattern(new ManagedHeap(), fragmenting: true, compact: true);

    /// <summary>The control on jemalloc.</summary>
    [Benchmark(Description = "jemalloc: pattern that does not fragment")]
    [BenchmarkCategory(Categories.Fragment)]
    public long JemNoFragmentation() => _lastResult = RunPattern(new JemHeap(), fragmenting: false, compact: false);

    /// <summary>The fragmenting pattern on jemalloc.</summary>
    [Benchmark(Description = "jemalloc: pattern that fragments")]
    [BenchmarkCategory(Categories.Fragment)]
    public long JemFragmentation() => _lastResult = RunPattern(new JemHeap(), fragmenting: true, compact: false);

    /// <summary>Checks the last timed operation, then measures the pattern's fragmentation on the managed heap.</summary>
    [GlobalCleanup(Target = nameof(ManagedNoFragmentation))]
    public void CleanupManagedNoFragmentation() => CheckAndMeasure(nameof(ManagedNoFragmentation), managed: true, fragmenting: false, compact: false);

    /// <summary>Checks the last timed operation, then measures the pattern's fragmentation on the managed heap.</summary>
    [GlobalCleanup(Target = nameof(ManagedFragmentation))]
    public void CleanupManagedFragmentation() => CheckAndMeasure(nameof(ManagedFragmentation), managed: true, fragmenting: true, compact: false);

    /// <summary>Checks the last timed operation, then measures the pattern's fragmentation on the managed heap.</summary>
    [GlobalCleanup(Target = nameof(ManagedFragmentationCompacted))]
    public void CleanupManagedFragmentationCompacted() => CheckAndMeasure(nameof(ManagedFragmentationCompacted), managed: true, fragmenting: true, compact: true);

    /// <summary>Checks the last timed operation, then measures the pattern's fragmentation on jemalloc.</summary>
    [GlobalCleanup(Target = nameof(JemNoFragmentation))]
    public void CleanupJemNoFragmentation() => CheckAndMeasure(nameof(JemNoFragmentation), managed: false, fragmenting: false, compact: false);

    /// <summary>Checks the last timed operation, then measures the pattern's fragmentation on jemalloc.</summary>
    [GlobalCleanup(Target = nameof(JemFragmentation))]
    public void CleanupJemFragmentation() => CheckAndMeasure(nameof(JemFragmentation), managed: false, fragmenting: true, compact: false);

    /// <summary>
    /// Checks the element count of the last timed operation, then runs the pattern once more,
    /// sampling the heap after every round (<see cref="FragmentationColumns"/>) and checking every
    /// element of every block still alive at the end.
    /// </summary>
    private void CheckAndMeasure(string method, bool managed, bool fragmenting, bool compact)
    {
        string name = $"malloc fragment {typeof(T).Name} x{Parameter}: {method}";
        ResultChecks.Equal(name, _expected, BrokenResultSwitch.Corrupt(_lastResult), "elements written by the last timed operation");
        Collect();
        _sampler = new FragmentationSampler(managed);
        try
        {
            long written = managed
                ? RunPattern(new ManagedHeap(), fragmenting, compact, name)
                : RunPattern(new JemHeap(), fragmenting, compact, name);
            ResultChecks.Equal(name, _expected, written, "elements written by the sampled operation");
            FragmentationColumns.Record(typeof(MallocBenchmarks<T>), method, Parameter, _sampler.Peak);
        }
        finally
        {
            _sampler = null;
            Collect();
        }
    }

    private long RunPattern<THeap>(THeap heap, bool fragmenting, bool compact, string? checkAs = null)
        where THeap : struct, IBlockHeap
    {
        long total = 0;
        long sequence = 0;
        var kept = new Block[KeptRounds * PerRound];
        var holes = new Block[PerRound];
        FragmentationSampler? sampler = _sampler;
        try
        {
            for (long round = 0; round < Parameter; round++)
            {
                for (int i = 0; i < PerRound; i++)
                {
                    int elements = ElementsFor(BaseBytes + (i * StepBytes));
                    ref Block slot = ref kept[(round % KeptRounds * PerRound) + i];
                    heap.Release(ref slot);
                    slot = New(ref heap, elements, ref sequence, ref total);
                    if (fragmenting)
                    {
                        // Interleave a long-lived block and a short-lived one, so freeing the short-lived ones leaves holes.
                        holes[i] = New(ref heap, elements, ref sequence, ref total);
                    }
                    else
                    {
                        Block shortLived = New(ref heap, elements, ref sequence, ref total);
                        heap.Release(ref shortLived);
                        Block bigger = New(ref heap, ElementsFor(BaseBytes + ((i + 2) * StepBytes)), ref sequence, ref total);
                        heap.Release(ref bigger);
                    }
                }

                if (fragmenting)
                {
                    for (int i = 0; i < PerRound; i++)
                    {
                        heap.Release(ref holes[i]);
                    }

                    for (int i = 0; i < PerRound; i++)
                    {
                        Block bigger = New(ref heap, ElementsFor(BaseBytes + ((i + 2) * StepBytes)), ref sequence, ref total);
                        heap.Release(ref bigger);
                    }
                }

                if (compact && round % CompactEveryRounds == CompactEveryRounds - 1)
                {
                    GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
                    GC.Collect();
                }

                sampler?.Sample(LiveBytes(kept));
            }

            if (checkAs is not null)
            {
                CheckSurvivors(ref heap, kept, checkAs);
            }
        }
        finally
        {
            for (int i = 0; i < kept.Length; i++)
            {
                heap.Release(ref kept[i]);
            }

            for (int i = 0; i < holes.Length; i++)
            {
                heap.Release(ref holes[i]);
            }
        }

        return total;
    }

    private static Block New<THeap>(ref THeap heap, int elements, ref long sequence, ref long total)
        where THeap : struct, IBlockHeap
    {
        Block block = heap.Allocate(elements);
        block.Stamp = (byte)((sequence++ % 251) + 1);
        // Every element written, on both sides: the same work for the managed heap and for jemalloc.
        MemoryMarshal.AsBytes(heap.Span(block)).Fill(block.Stamp);
        total += elements;
        return block;
    }

    private static void CheckSurvivors<THeap>(ref THeap heap, Block[] kept, string name)
        where THeap : struct, IBlockHeap
    {
        bool right = true;
        int survivors = 0;
        foreach (Block block in kept)
        {
            if (!block.IsEmpty)
            {
                Span<T> elements = heap.Span(block);
                if (survivors++ == 0)
                {
                    BrokenResultSwitch.Corrupt(elements);
                }

                right &= !MemoryMarshal.AsBytes(elements).ContainsAnyExcept(block.Stamp);
            }
        }

        ResultChecks.Check(name, right && survivors > 0,
            $"every element of the {survivors} blocks alive at the end holds the value written into its block");
    }

    private static long LiveBytes(Block[] kept)
    {
        long live = 0;
        foreach (Block block in kept)
        {
            live += block.Elements * (long)sizeof(T);
        }

        return live;
    }

    private static int ElementsFor(int bytes) => bytes / sizeof(T);

    /// <summary>One block of the pattern: a managed array or jemalloc memory, and the byte written into all of it.</summary>
    private struct Block
    {
        public T[]? Array;
        public T* Pointer;
        public int Elements;
        public byte Stamp;

        public readonly bool IsEmpty => Elements == 0;
    }

    /// <summary>Where the pattern's blocks come from.</summary>
    private interface IBlockHeap
    {
        Block Allocate(int elements);

        Span<T> Span(Block block);

        void Release(ref Block block);
    }

    /// <summary>Managed arrays, not zeroed (<see cref="GC.AllocateUninitializedArray{T}(int, bool)"/>), released by dropping them.</summary>
    private readonly struct ManagedHeap : IBlockHeap
    {
        public Block Allocate(int elements) => new() { Array = GC.AllocateUninitializedArray<T>(elements), Elements = elements };

        public Span<T> Span(Block block) => block.Array;

        public void Release(ref Block block) => block = default;
    }

    /// <summary>jemalloc memory, not zeroed (<see cref="Jem.Malloc"/>), released with a sized free.</summary>
    private readonly struct JemHeap : IBlockHeap
    {
        public Block Allocate(int elements)
        {
            nuint bytes = (nuint)elements * (nuint)sizeof(T);
            T* memory = (T*)Jem.Malloc(bytes);
            if (memory == null)
            {
                NativeMemoryError.Throw("je_malloc", bytes);
            }

            return new Block { Pointer = memory, Elements = elements };
        }

        public Span<T> Span(Block block) => new(block.Pointer, block.Elements);

        public void Release(ref Block block)
        {
            if (block.Pointer != null)
            {
                Jem.Sdallocx(block.Pointer, (nuint)block.Elements * (nuint)sizeof(T));
            }

            block = default;
        }
    }

    /// <summary>
    /// A full, compacting collection that also gives the freed memory back to the operating system
    /// (<see cref="GCCollectionMode.Aggressive"/>), and the same for jemalloc (every arena's unused
    /// pages purged), so the next benchmark starts without this one's garbage on either heap: a
    /// multi-gigabyte managed array must be gone before a multi-gigabyte native one is made.
    /// </summary>
    internal static void Collect()
    {
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        JemTuning.PurgeAll();
    }
}
