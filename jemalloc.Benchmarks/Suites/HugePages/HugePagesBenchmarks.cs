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
/// memory it got (a full collection runs between iterations), so its operations mostly touch memory
/// already faulted in: compare the page-fault column.
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
    private ulong _lastCreate;
    private (ulong Vertical, ulong Horizontal) _lastColumnar;
    private long _faults;
    private long _operations;

    /// <summary>The row counts given on the command line.</summary>
    public static IEnumerable<long> Rows => SuiteParameters.Sizes;

    /// <summary>Elements of the array (<c>create</c>) or rows of each column (<c>columnar</c>).</summary>
    [ParamsSource(nameof(Rows))]
    public long Parameter { get; set; }

    /// <summary>Creates the two arenas (4 KiB and huge pages, budgeted, purging at once).</summary>
    [GlobalSetup(Targets = [nameof(CreateManaged), nameof(CreateSmallPages), nameof(CreateHugePages)])]
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

    /// <summary>A managed array, as big arrays are usually made.</summary>
    [Benchmark(Baseline = true, Description = "ulong[] + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateManaged()
    {
        long faults = ThreadPageFaults.Read();
        ulong[] array = GC.AllocateUninitializedArray<ulong>(checked((int)Parameter));
        array.AsSpan().Fill(FillValue);
        _lastCreate = array[0] + array[^1];
        Count(faults);
        return _lastCreate;
    }

    /// <summary>A HugeArray on 4 KiB pages.</summary>
    [Benchmark(Description = "HugeArray<ulong> 4 KiB pages + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateSmallPages() => CreateAndFill(_smallPages!);

    /// <summary>A HugeArray on transparent huge pages.</summary>
    [Benchmark(Description = "HugeArray<ulong> huge pages + Fill")]
    [BenchmarkCategory(Categories.Create)]
    public ulong CreateHugePages() => CreateAndFill(_hugePages!);

    /// <summary>The columnar workload over managed arrays (pinned, so the kernels get pointers).</summary>
    [Benchmark(Baseline = true, Description = "columns: ulong[]")]
    [BenchmarkCategory(ColumnarCategory)]
    public ulong ColumnarManaged()
    {
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
        GC.KeepAlive(result);
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

    /// <summary>Checks the last operation's result and destroys the arenas.</summary>
    [GlobalCleanup]
    public void Cleanup()
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
            if (_lastColumnar != default)
            {
                ResultChecks.Equal($"hugepages columnar x{Parameter}", _expectedTotal, _lastColumnar.Vertical, "sum of the vertical sums");
                ResultChecks.Equal($"hugepages columnar x{Parameter}", _expectedTotal, _lastColumnar.Horizontal, "sum of the horizontal sums");
            }
            else
            {
                ResultChecks.Equal($"hugepages create x{Parameter}", FillValue * 2, _lastCreate, "first plus last element");
            }
        }
        finally
        {
            _lastColumnar = default;
            _lastCreate = 0;
            _smallPages?.Dispose();
            _hugePages?.Dispose();
        }
    }

    private static JemArena NewArena(bool hugePages) =>
        new(ColumnarWorkload.BudgetBytes, hugePages) { DirtyDecayMilliseconds = 0, MuzzyDecayMilliseconds = 0 };

    private ulong CreateAndFill(JemArena arena)
    {
        long faults = ThreadPageFaults.Read();
        using (HugeArray<ulong> array = arena.CreateHugeArray<ulong>(Parameter))
        {
            array.Fill(FillValue);
            _lastCreate = array[0] + array[array.Length - 1];
        }

        Count(faults);
        return _lastCreate;
    }

    private void Count(long faultsBefore)
    {
        _faults += ThreadPageFaults.Read() - faultsBefore;
        _operations++;
    }

    private ulong Columnar(JemArena arena)
    {
        long faults = ThreadPageFaults.Read();
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
        // One reset frees every column; disposing the invalidated arrays afterwards frees nothing.
        arena.Reset();
        foreach (HugeArray<ulong> array in arrays)
        {
            array.Dispose();
        }

        Count(faults);
        return _lastColumnar.Vertical;
    }
}
