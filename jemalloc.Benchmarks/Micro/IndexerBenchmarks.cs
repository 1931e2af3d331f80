using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// Element loops over 10M <see cref="int"/>s written as users write them (the structure copied from a
/// field to a local, its <c>Length</c> read in the loop's condition), each against the same loop over a
/// <see cref="Span{T}"/> of the same structure's memory (the baseline of its category: no check at
/// all). The baseline's span is made from a pointer kept since set-up, so that its method has no
/// exception handling, and it reads the very pages the structure's rows read: a span over other memory
/// (a <c>FixedBuffer</c>'s, without huge pages) measured the pages, not the indexer.
/// Goals: indexer sums within 1.2x of the span, indexer writes within 1.5x, loops over a lease's span 1.0x.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees them in [GlobalCleanup].")]
public unsafe class IndexerBenchmarks
{
    private FixedBuffer<int> _fixedBuffer;
    private SafeArray<int> _safeArray = null!;
    private HugeArray<int> _hugeArray = null!;
    private nint _fixedBufferPointer;
    private nint _safeArrayPointer;
    private nint _hugeArrayPointer;

    /// <summary>The number of elements.</summary>
    [Params(10_000_000)]
    public int Length { get; set; }

    /// <summary>Allocates and fills the structures.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _fixedBuffer = new FixedBuffer<int>(Length);
        _safeArray = new SafeArray<int>(Length);
        _hugeArray = new HugeArray<int>(Length);
        for (int i = 0; i < Length; i++)
        {
            _fixedBuffer[i] = i;
            _safeArray[i] = i;
            _hugeArray[i] = i;
        }

        _fixedBufferPointer = _fixedBuffer.Pointer;
        _safeArrayPointer = _safeArray.Pointer;
        _hugeArrayPointer = _hugeArray.Pointer;
    }

    /// <summary>
    /// Checks what every row computes (each sum is the exact sum of 0..n-1, wrapped like an
    /// <see cref="int"/>; after the write rows every element still holds its index), then frees the
    /// structures. Run after each row, so the row that ran is among the checked ones.
    /// </summary>
    [GlobalCleanup]
    public void CheckAndFree()
    {
        try
        {
            string name = $"micro indexer [{Length}]";
            int expected = unchecked((int)((long)Length * (Length - 1) / 2));
            foreach ((string row, Func<int> sum) in new (string, Func<int>)[]
            {
                ("FixedBuffer<int> span sum", FixedBufferSpanSum), ("FixedBuffer<int> indexer sum", FixedBufferSum), ("FixedBuffer<int> lease sum", FixedBufferLeaseSum),
                ("SafeArray<int> span sum", SafeArraySpanSum), ("SafeArray<int> indexer sum", SafeArraySum), ("SafeArray<int> lease sum", SafeArrayLeaseSum),
                ("HugeArray<int> span sum", HugeArraySpanSum), ("HugeArray<int> indexer sum", HugeArraySum), ("HugeArray<int> lease sum", HugeArrayLeaseSum),
            })
            {
                ResultChecks.Equal($"{name}: {row}", expected, BrokenResultSwitch.Corrupt(sum()), "the sum of 0..n-1 (wrapping)");
            }

            CheckIndices($"{name}: FixedBuffer<int> (written by its write rows)", _fixedBuffer.Lease());
            CheckIndices($"{name}: SafeArray<int> (written by its write rows)", _safeArray.Lease());
            CheckIndices($"{name}: HugeArray<int> (written by its write rows)", _hugeArray.Lease());
        }
        finally
        {
            _fixedBuffer.Free();
            _safeArray.Dispose();
            _hugeArray.Dispose();
        }
    }

    private static void CheckIndices(string name, MemoryLease<int> lease)
    {
        using (lease)
        {
            bool right = true;
            long index = 0;
            foreach (Span<int> chunk in lease.GetChunks())
            {
                BrokenResultSwitch.Corrupt(chunk);
                for (int i = 0; i < chunk.Length; i++, index++)
                {
                    right &= chunk[i] == (int)index;
                }
            }

            ResultChecks.Check(name, right, $"every one of the {index:N0} elements holds its index");
        }
    }

    /// <summary>The baseline: a span over the FixedBuffer's own memory, taken without any check, in a method with no exception handling.</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the FixedBuffer<int>'s memory: sum")]
    [BenchmarkCategory("FixedBuffer<int> sum")]
    public int FixedBufferSpanSum()
    {
        var span = new Span<int>((void*)_fixedBufferPointer, Length);
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>Sums through the FixedBuffer indexer, as users write the loop: the structure copied from a field to a local, its Length read in the condition.</summary>
    [Benchmark(Description = "FixedBuffer<int> indexer: sum")]
    [BenchmarkCategory("FixedBuffer<int> sum")]
    public int FixedBufferSum()
    {
        FixedBuffer<int> array = _fixedBuffer;
        int sum = 0;
        for (int i = 0; i < array.Length; i++)
        {
            sum += array[i];
        }

        return sum;
    }
    /// <summary>Sums through the span of a FixedBuffer lease, the scoped access the structures offer for loops.</summary>
    [Benchmark(Description = "FixedBuffer<int> lease span: sum")]
    [BenchmarkCategory("FixedBuffer<int> sum")]
    public int FixedBufferLeaseSum()
    {
        using MemoryLease<int> lease = _fixedBuffer.Lease();
        Span<int> span = lease.Span;
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>The baseline of the write loops over the FixedBuffer's memory (no check, no exception handling).</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the FixedBuffer<int>'s memory: write")]
    [BenchmarkCategory("FixedBuffer<int> write")]
    public void FixedBufferSpanWrite()
    {
        var span = new Span<int>((void*)_fixedBufferPointer, Length);
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
    /// <summary>Writes every element through the FixedBuffer indexer, as users write the loop.</summary>
    [Benchmark(Description = "FixedBuffer<int> indexer: write")]
    [BenchmarkCategory("FixedBuffer<int> write")]
    public void FixedBufferWrite()
    {
        FixedBuffer<int> array = _fixedBuffer;
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = i;
        }
    }
    /// <summary>Writes every element through the span of a FixedBuffer lease.</summary>
    [Benchmark(Description = "FixedBuffer<int> lease span: write")]
    [BenchmarkCategory("FixedBuffer<int> write")]
    public void FixedBufferLeaseWrite()
    {
        using MemoryLease<int> lease = _fixedBuffer.Lease();
        Span<int> span = lease.Span;
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
    /// <summary>The baseline: a span over the SafeArray's own memory, taken without any check, in a method with no exception handling.</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the SafeArray<int>'s memory: sum")]
    [BenchmarkCategory("SafeArray<int> sum")]
    public int SafeArraySpanSum()
    {
        var span = new Span<int>((void*)_safeArrayPointer, Length);
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>Sums through the SafeArray indexer, as users write the loop: the structure copied from a field to a local, its Length read in the condition.</summary>
    [Benchmark(Description = "SafeArray<int> indexer: sum")]
    [BenchmarkCategory("SafeArray<int> sum")]
    public int SafeArraySum()
    {
        SafeArray<int> array = _safeArray;
        int sum = 0;
        for (int i = 0; i < array.Length; i++)
        {
            sum += array[i];
        }

        return sum;
    }
    /// <summary>Sums through the span of a SafeArray lease, the scoped access the structures offer for loops.</summary>
    [Benchmark(Description = "SafeArray<int> lease span: sum")]
    [BenchmarkCategory("SafeArray<int> sum")]
    public int SafeArrayLeaseSum()
    {
        using MemoryLease<int> lease = _safeArray.Lease();
        Span<int> span = lease.Span;
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>The baseline of the write loops over the SafeArray's memory (no check, no exception handling).</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the SafeArray<int>'s memory: write")]
    [BenchmarkCategory("SafeArray<int> write")]
    public void SafeArraySpanWrite()
    {
        var span = new Span<int>((void*)_safeArrayPointer, Length);
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
    /// <summary>Writes every element through the SafeArray indexer, as users write the loop.</summary>
    [Benchmark(Description = "SafeArray<int> indexer: write")]
    [BenchmarkCategory("SafeArray<int> write")]
    public void SafeArrayWrite()
    {
        SafeArray<int> array = _safeArray;
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = i;
        }
    }
    /// <summary>Writes every element through the span of a SafeArray lease.</summary>
    [Benchmark(Description = "SafeArray<int> lease span: write")]
    [BenchmarkCategory("SafeArray<int> write")]
    public void SafeArrayLeaseWrite()
    {
        using MemoryLease<int> lease = _safeArray.Lease();
        Span<int> span = lease.Span;
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
    /// <summary>The baseline: a span over the HugeArray's own memory, taken without any check, in a method with no exception handling.</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the HugeArray<int>'s memory: sum")]
    [BenchmarkCategory("HugeArray<int> sum")]
    public int HugeArraySpanSum()
    {
        var span = new Span<int>((void*)_hugeArrayPointer, Length);
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>Sums through the HugeArray indexer, as users write the loop: the structure copied from a field to a local, its Length read in the condition.</summary>
    [Benchmark(Description = "HugeArray<int> indexer: sum")]
    [BenchmarkCategory("HugeArray<int> sum")]
    public int HugeArraySum()
    {
        HugeArray<int> array = _hugeArray;
        int sum = 0;
        for (long i = 0; i < array.Length; i++)
        {
            sum += array[i];
        }

        return sum;
    }
    /// <summary>Sums through the span of a HugeArray lease, the scoped access the structures offer for loops.</summary>
    [Benchmark(Description = "HugeArray<int> lease span: sum")]
    [BenchmarkCategory("HugeArray<int> sum")]
    public int HugeArrayLeaseSum()
    {
        using MemoryLease<int> lease = _hugeArray.Lease();
        Span<int> span = lease.Span;
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }
    /// <summary>The baseline of the write loops over the HugeArray's memory (no check, no exception handling).</summary>
    [Benchmark(Baseline = true, Description = "Span<int> over the HugeArray<int>'s memory: write")]
    [BenchmarkCategory("HugeArray<int> write")]
    public void HugeArraySpanWrite()
    {
        var span = new Span<int>((void*)_hugeArrayPointer, Length);
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
    /// <summary>Writes every element through the HugeArray indexer, as users write the loop.</summary>
    [Benchmark(Description = "HugeArray<int> indexer: write")]
    [BenchmarkCategory("HugeArray<int> write")]
    public void HugeArrayWrite()
    {
        HugeArray<int> array = _hugeArray;
        for (long i = 0; i < array.Length; i++)
        {
            array[i] = (int)i;
        }
    }
    /// <summary>Writes every element through the span of a HugeArray lease.</summary>
    [Benchmark(Description = "HugeArray<int> lease span: write")]
    [BenchmarkCategory("HugeArray<int> write")]
    public void HugeArrayLeaseWrite()
    {
        using MemoryLease<int> lease = _hugeArray.Lease();
        Span<int> span = lease.Span;
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }
}
