using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.HugePages;

/// <summary>
/// The <c>hugepages</c> suite: what transparent huge pages change for big arrays. Three kinds of
/// memory are compared, each operation starting from fresh memory: managed arrays, jemalloc with
/// 4 KiB pages and jemalloc with huge pages (2 MiB alignment plus <c>madvise(MADV_HUGEPAGE)</c>).
/// </summary>
/// <remarks>
/// <para>
/// <c>create</c>: allocate one array of <see cref="Parameter"/> <see cref="ulong"/>s and fill it (the
/// cost of first touching memory, nearly all page faults). <c>columnar</c>: allocate
/// <see cref="ColumnarWorkload.Columns"/> columns of <see cref="Parameter"/> rows plus a result
/// column under the <see cref="ColumnarWorkload.BudgetBytes"/> budget, fill the columns with
/// pseudo-random numbers, sum each column (vertical) and add them row by row into the result
/// (horizontal); the jemalloc columns live in a budgeted <see cref="JemArena"/> and are all freed at
/// once by its reset.
/// </para>
/// <para>
/// The jemalloc arenas purge at once (decay 0), so each operation gets fresh pages from the kernel,
/// as the first allocation of a big array in a process does. The managed heap keeps and reuses the
/// memory it got (a full collection runs between iterations), so two managed create rows are shown:
/// the baseline gives the heap's free memory back to the system before each operation (an
/// aggressive collection, outside the timed region) and allocates a zeroed <c>new ulong[]</c>, like
/// for like with the jemalloc rows; the other allocates uninitialized memory the heap already
/// faulted in, which pays neither page faults nor zeroing. The page-fault column shows which pays
/// what. The columnar rows allocate uninitialized pinned managed arrays.
/// </para>
/// <para>
/// Every result checked is the last timed operation's own: each create keeps the array it made until
/// the next operation (a managed one is dropped before the next iteration's collection, a native one
/// freed at the start of the next operation, where the free was timed before), and the cleanup
/// checks that every element holds the fill value; each columnar workload keeps its columns until
/// the next operation (the arena's reset moves to its start), and the cleanup checks its sums and
/// recomputes and compares every row of its result column.
/// </para>
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public unsafe class HugePagesBenchmarks
{
    /// <summary>The category of the columnar workload.</summary>
    public const string ColumnarCategory = "columnar";

    private const ulong FillValue = 0x5EED;

    private JemArena? _smallPages;
    private JemArena? _hugePages;
    private ulong _expectedTotal;
    private (ulong Vertical, ulong Horizontal) _lastColumnar;

    // What the last timed operation made, kept for the cleanup's check.
    private ulong[]? _lastManagedArray;
    private HugeArray<ulong>? _lastNativeArray;
    private JemArena? _lastColumnarArena;
    private HugeArray<ulong>[]? _lastColumns;
    private long _faults;
    private long _operations;

    /// <summary>The row counts given on the command line.</summary>
    public static IEnumerable<long> Rows => SuiteParameters.Sizes;

    /// <summary>Elements of the array (<c>create</c>) or rows of each column (<c>columnar</c>).</summary>
    [ParamsSource(nameof(Rows))]
    public long Parameter { get; set; }

    /// <summary>Creates the two arenas (4 KiB and huge pages, budgeted, purging at once).</summary>
    [GlobalSetup(Targets = [nameof(CreateManagedFresh), nameof(CreateManagedReused), nameof(CreateSmallPages), nameof(CreateHugePages)])]
    public void SetupCreate()
    {
        _smallPages = NewArena(hugePages: false);
        _hugePages = NewArena(hugePages: true);
    }

    /// <summary>Creates the arenas and computes the expected sums of the columnar workload.</summary>
    [GlobalSetup(Targets = [nameof(ColumnarManaged), nameof(ColumnarSmallPages), nameof(ColumnarHugePages)])]
    public void SetupColumnar()
    {
        SetupCreate();
        _expectedTotal = ColumnarWorkload.ExpectedTotal(Parameter, ColumnarWorkload.Columns);
    }

    /// <summary>
    /// Gives the managed heap's free memory back to the system before each managed create on fresh
    /// pages, so that row, like the jemalloc rows (whose arenas purge at once), faults in new pages.
    /// </summary>
    [IterationSetup(Target = nameof(CreateManagedFresh))]
    public void ReleaseManagedMemory()
    {
        // The last operation's array goes first, so the collection gives its memory back too.
        _lastManagedArray = null;
        MallocBenchmarks<byte>.Collect();
    }

    /// <summary>
    /// A full collection before each reused-memory managed create, which keeps the memory it frees
    /// for reuse (every create row has an iteration setup, so all run one operation per iteration).
    /// </summary>
    [IterationSetup(Target = nameof(CreateManagedReused))]
    public void CollectKeepingMemory()
    {
        _lastManagedArray = null;
        GC.Collect();
    }

    /// <summary>Purges every jemalloc arena before each jemalloc create (their decay of 0 already does; this makes it certain).</summary>
    [IterationSetup(Targets = [nameof(CreateSmallPages), nameof(CreateHugePages)])]
    public void PurgeArenas() => JemTuning.PurgeAll();

    /// <summary>A zeroed managed array on memory the heap got back from the system just before, filled.</summary>
    [Benchmark(Baseline = true, Description = "new ulong[] on fresh pages (heap memory given back first) + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateManagedFresh()
    {
        long faults = ThreadPageFaults.Read();
        ulong[] array = new ulong[checked((int)Parameter)];
        array.AsSpan().Fill(FillValue);
        Count(faults);
        _lastManagedArray = array;
        return (ulong)array.Length;
    }

    /// <summary>
    /// An uninitialized managed array, filled: the heap reuses memory it already faulted in (a full
    /// collection runs between iterations) and does not zero it. Cheaper work than the other rows.
    /// </summary>
    [Benchmark(Description = "GC.AllocateUninitializedArray<ulong> on reused heap memory (not zeroed) + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateManagedReused()
    {
        long faults = ThreadPageFaults.Read();
        ulong[] array = GC.AllocateUninitializedArray<ulong>(checked((int)Parameter));
        array.AsSpan().Fill(FillValue);
        Count(faults);
        _lastManagedArray = array;
        return (ulong)array.Length;
    }

    /// <summary>A HugeArray on 4 KiB pages.</summary>
    [Benchmark(Description = "new HugeArray<ulong> on fresh 4 KiB pages (arena purged) + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateSmallPages() => CreateAndFill(_smallPages!);

    /// <summary>A HugeArray on transparent huge pages.</summary>
    [Benchmark(Description = "new HugeArray<ulong> on fresh huge pages (arena purged) + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateHugePages() => CreateAndFill(_hugePages!);

    /// <summary>The columnar workload over managed arrays (pinned, so the kernels get pointers).</summary>
    [Benchmark(Baseline = true, Description = "columns: ulong[]")]
    [BenchmarkCategory(ColumnarCategory)]
    public ulong ColumnarManaged()
    {
        _lastManagedArray = null;
        long faults = ThreadPageFaults.Read();
        int rows = checked((int)Parameter);
        var arrays = new ulong[ColumnarWorkload.Columns][];
        Span<nint> columns = stackalloc nint[arrays.Length];
        for (int c = 0; c < arrays.Length; c++)
        {
            arrays[c] = GC.AllocateUninitializedArray<ulong>(rows, pinned: true);
            columns[c] = (nint)Unsafe.AsPointer(ref arrays[c][0]);
        }

        ulong[] result = GC.AllocateUninitializedArray<ulong>(rows, pinned: true);
        _lastColumnar = ColumnarWorkload.Run(columns, (ulong*)Unsafe.AsPointer(ref result[0]), rows);
        GC.KeepAlive(arrays);
        _lastManagedArray = result;
        Count(faults);
        return _lastColumnar.Vertical;
    }

    /// <summary>The columnar workload over HugeArrays on 4 KiB pages in a budgeted arena, freed by one reset.</summary>
    [Benchmark(Description = "columns: HugeArray<ulong> 4 KiB pages, arena reset")]
    [BenchmarkCategory(ColumnarCategory)]
    public ulong ColumnarSmallPages() => Columnar(_smallPages!);

    /// <summary>The columnar workload over HugeArrays on huge pages in a budgeted arena, freed by one reset.</summary>
    [Benchmark(Description = "columns: HugeArray<ulong> huge pages, arena reset")]
    [BenchmarkCategory(ColumnarCategory)]
    public ulong ColumnarHugePages() => Columnar(_hugePages!);

    /// <summary>Checks every element of the array the last timed create made, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(CreateManagedFresh))]
    public void CleanupCreateManagedFresh() => CheckCreate(nameof(CreateManagedFresh));

    /// <summary>Checks every element of the array the last timed create made, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(CreateManagedReused))]
    public void CleanupCreateManagedReused() => CheckCreate(nameof(CreateManagedReused));

    /// <summary>Checks every element of the array the last timed create made, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(CreateSmallPages))]
    public void CleanupCreateSmallPages() => CheckCreate(nameof(CreateSmallPages));

    /// <summary>Checks every element of the array the last timed create made, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(CreateHugePages))]
    public void CleanupCreateHugePages() => CheckCreate(nameof(CreateHugePages));

    /// <summary>Checks the last timed run's sums and every row of its result column, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(ColumnarManaged))]
    public void CleanupColumnarManaged() => CheckColumnar(nameof(ColumnarManaged));

    /// <summary>Checks the last timed run's sums and every row of its result column, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(ColumnarSmallPages))]
    public void CleanupColumnarSmallPages() => CheckColumnar(nameof(ColumnarSmallPages));

    /// <summary>Checks the last timed run's sums and every row of its result column, then destroys the arenas.</summary>
    [GlobalCleanup(Target = nameof(ColumnarHugePages))]
    public void CleanupColumnarHugePages() => CheckColumnar(nameof(ColumnarHugePages));

    private void CheckCreate(string benchmark) => CheckAndDestroy(() =>
    {
        string name = $"hugepages create x{Parameter}: {benchmark}";
        long elements = 0;
        bool right = true;
        ResultChecks.Check(name, _lastManagedArray is not null || _lastNativeArray is not null, "the last timed operation left the array it created");
        if (_lastManagedArray is { } managed)
        {
            BrokenResultSwitch.Corrupt(managed.AsSpan());
            right = !managed.AsSpan().ContainsAnyExcept(FillValue);
            elements = managed.LongLength;
        }
        else if (_lastNativeArray is { } native)
        {
            using MemoryLease<ulong> lease = native.Lease();
            // The switch corrupts the first, middle or last element of the whole array (of each chunk past 2^31 elements).
            bool whole = lease.Length <= int.MaxValue;
            if (whole)
            {
                BrokenResultSwitch.Corrupt(lease.Span);
            }

            foreach (Span<ulong> chunk in lease.GetChunks())
            {
                if (!whole)
                {
                    BrokenResultSwitch.Corrupt(chunk);
                }

                right &= !chunk.ContainsAnyExcept(FillValue);
                elements += chunk.Length;
            }
        }

        ResultChecks.Equal(name, Parameter, elements, "elements of the array created (last timed operation)");
        ResultChecks.Check(name, right, $"every one of the {Parameter:N0} elements holds the fill value (last timed operation)");
    });

    private void CheckColumnar(string benchmark) => CheckAndDestroy(() =>
    {
        string name = $"hugepages columnar x{Parameter}: {benchmark}";
        // The sums are corrupted only when every position is: with one position, the row check must catch it.
        bool sumsBroken = BrokenResultSwitch.Setting == BrokenResultSwitch.Everywhere;
        ResultChecks.Equal(name, _expectedTotal, sumsBroken ? BrokenResultSwitch.Corrupt(_lastColumnar.Vertical) : _lastColumnar.Vertical, "sum of the vertical sums (last timed operation)");
        ResultChecks.Equal(name, _expectedTotal, sumsBroken ? BrokenResultSwitch.Corrupt(_lastColumnar.Horizontal) : _lastColumnar.Horizontal, "sum of the horizontal sums (last timed operation)");
        bool right;
        if (_lastManagedArray is { } managed)
        {
            BrokenResultSwitch.Corrupt(managed.AsSpan());
            right = ColumnarWorkload.ResultIsRight(managed, 0, ColumnarWorkload.Columns);
        }
        else if (_lastColumns is { } columns)
        {
            using MemoryLease<ulong> lease = columns[^1].Lease();
            bool whole = lease.Length <= int.MaxValue;
            if (whole)
            {
                BrokenResultSwitch.Corrupt(lease.Span);
            }

            right = true;
            long row = 0;
            foreach (Span<ulong> chunk in lease.GetChunks())
            {
                if (!whole)
                {
                    BrokenResultSwitch.Corrupt(chunk);
                }

                right &= ColumnarWorkload.ResultIsRight(chunk, row, ColumnarWorkload.Columns);
                row += chunk.Length;
            }
        }
        else
        {
            right = false;
        }

        ResultChecks.Check(name, right, $"every one of the {Parameter:N0} rows of the result column (last timed operation) is the sum of its row");
    });

    private void CheckAndDestroy(Action check)
    {
        if (ThreadPageFaults.IsSupported && _operations > 0)
        {
            // BenchmarkDotNet shows this process's faults per operation; this is the operation's own count.
            Console.WriteLine($"// hugepages x{Parameter}: {_faults / (double)_operations:N0} page faults per operation on the benchmark thread (getrusage RUSAGE_THREAD, over all {_operations} operations run, warm-up included)");
        }

        _faults = 0;
        _operations = 0;
        try
        {
            check();
        }
        finally
        {
            _lastColumnar = default;
            _lastManagedArray = null;
            FreeLastNative();
            _smallPages?.Dispose();
            _hugePages?.Dispose();
        }
    }

    private static JemArena NewArena(bool hugePages) =>
        new(ColumnarWorkload.BudgetBytes, hugePages) { DirtyDecayMilliseconds = 0, MuzzyDecayMilliseconds = 0 };

    private ulong CreateAndFill(JemArena arena)
    {
        long faults = ThreadPageFaults.Read();
        // The previous operation's array is freed here, timed, as its own operation freed it before
        // its result was kept for the check.
        FreeLastNative();
        HugeArray<ulong> array = arena.CreateHugeArray<ulong>(Parameter);
        array.Fill(FillValue);
        Count(faults);
        _lastNativeArray = array;
        return (ulong)array.Length;
    }

    /// <summary>Frees what the last native operation kept: its array, or its columns (by the reset of their arena).</summary>
    private void FreeLastNative()
    {
        _lastNativeArray?.Dispose();
        _lastNativeArray = null;
        if (_lastColumns is { } columns)
        {
            // One reset frees every column; disposing the invalidated arrays afterwards frees nothing.
            _lastColumnarArena!.Reset();
            foreach (HugeArray<ulong> column in columns)
            {
                column.Dispose();
            }

            _lastColumns = null;
            _lastColumnarArena = null;
        }
    }

    private void Count(long faultsBefore)
    {
        _faults += ThreadPageFaults.Read() - faultsBefore;
        _operations++;
    }

    private ulong Columnar(JemArena arena)
    {
        long faults = ThreadPageFaults.Read();
        // The previous operation's columns go first (one reset, timed as before), then this one's are made.
        FreeLastNative();
        var arrays = new HugeArray<ulong>[ColumnarWorkload.Columns + 1];
        Span<nint> columns = stackalloc nint[ColumnarWorkload.Columns];
        for (int c = 0; c < arrays.Length; c++)
        {
            arrays[c] = arena.CreateHugeArray<ulong>(Parameter);
        }

        for (int c = 0; c < columns.Length; c++)
        {
            columns[c] = arrays[c].Pointer;
        }

        _lastColumnar = ColumnarWorkload.Run(columns, (ulong*)arrays[^1].Pointer, Parameter);
        _lastColumns = arrays;
        _lastColumnarArena = arena;
        Count(faults);
        return _lastColumnar.Vertical;
    }
}
