using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// An indexer loop over 10M <see cref="int"/>s: each checked structure against the same loop over a
/// <see cref="Span{T}"/> of the same native memory (the baseline: no validity check at all).
/// Goals: indexer sums within 1.2x of the span, indexer writes within 1.5x, loops over a lease's span 1.0x.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees them in [GlobalCleanup].")]
public class IndexerBenchmarks
{
    private FixedBuffer<int> _fixedBuffer;
    private SafeArray<int> _safeArray = null!;
    private HugeArray<int> _hugeArray = null!;
    private int[] _managed = null!;

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
        _managed = new int[Length];
        for (int i = 0; i < Length; i++)
        {
            _fixedBuffer[i] = i;
            _safeArray[i] = i;
            _hugeArray[i] = i;
            _managed[i] = i;
        }
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
                ("Span<int> (native memory) sum", SpanSum), ("Span<int> (managed array) sum", ManagedSpanSum),
                ("SafeArray<int> lease span sum", SafeArrayLeaseSum), ("FixedBuffer<int> indexer sum", FixedBufferSum),
                ("SafeArray<int> indexer sum", SafeArraySum), ("HugeArray<int> indexer sum", HugeArraySum),
            })
            {
                ResultChecks.Equal($"{name}: {row}", expected, BrokenResultSwitch.Corrupt(sum()), "the sum of 0..n-1 (wrapping)");
            }

            CheckIndices($"{name}: FixedBuffer<int> (written by the span and indexer rows)", _fixedBuffer.Lease());
            CheckIndices($"{name}: SafeArray<int> (written by the lease and indexer rows)", _safeArray.Lease());
            CheckIndices($"{name}: HugeArray<int> (written by the indexer row)", _hugeArray.Lease());
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

    /// <summary>Sums through a span over the FixedBuffer's native memory.</summary>
    [Benchmark(Baseline = true, Description = "Span<int> (native memory) indexer sum")]
    public int SpanSum()
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

    /// <summary>Sums through a span over a managed array.</summary>
    [Benchmark(Description = "Span<int> (managed array) indexer sum")]
    public int ManagedSpanSum()
    {
        Span<int> span = _managed;
        int sum = 0;
        for (int i = 0; i < span.Length; i++)
        {
            sum += span[i];
        }

        return sum;
    }

    /// <summary>Sums through the span of a SafeArray lease (the scoped access the structures offer for loops).</summary>
    [Benchmark(Description = "SafeArray<int> lease span sum")]
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

    /// <summary>Sums through the FixedBuffer indexer.</summary>
    [Benchmark(Description = "FixedBuffer<int> indexer sum")]
    public int FixedBufferSum()
    {
        FixedBuffer<int> buffer = _fixedBuffer;
        int sum = 0;
        for (int i = 0; i < buffer.Length; i++)
        {
            sum += buffer[i];
        }

        return sum;
    }

    /// <summary>Sums through the SafeArray indexer.</summary>
    [Benchmark(Description = "SafeArray<int> indexer sum")]
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

    /// <summary>Sums through the HugeArray indexer.</summary>
    [Benchmark(Description = "HugeArray<int> indexer sum")]
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

    /// <summary>Writes every element through a span (baseline of the write loops).</summary>
    [Benchmark(Description = "Span<int> (native memory) indexer write")]
    public void SpanWrite()
    {
        using MemoryLease<int> lease = _fixedBuffer.Lease();
        Span<int> span = lease.Span;
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }

    /// <summary>Writes every element through the span of a SafeArray lease.</summary>
    [Benchmark(Description = "SafeArray<int> lease span write")]
    public void SafeArrayLeaseWrite()
    {
        using MemoryLease<int> lease = _safeArray.Lease();
        Span<int> span = lease.Span;
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }
    }

    /// <summary>Writes every element through the FixedBuffer indexer.</summary>
    [Benchmark(Description = "FixedBuffer<int> indexer write")]
    public void FixedBufferWrite()
    {
        FixedBuffer<int> buffer = _fixedBuffer;
        for (int i = 0; i < buffer.Length; i++)
        {
            buffer[i] = i;
        }
    }

    /// <summary>Writes every element through the SafeArray indexer.</summary>
    [Benchmark(Description = "SafeArray<int> indexer write")]
    public void SafeArrayWrite()
    {
        SafeArray<int> array = _safeArray;
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = i;
        }
    }

    /// <summary>Writes every element through the HugeArray indexer.</summary>
    [Benchmark(Description = "HugeArray<int> indexer write")]
    public void HugeArrayWrite()
    {
        HugeArray<int> array = _hugeArray;
        for (long i = 0; i < array.Length; i++)
        {
            array[i] = (int)i;
        }
    }
}
