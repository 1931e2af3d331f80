using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.IO;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// One rent of a pool block, as a pipe takes one per segment: rent a block of the next of
/// <see cref="Sizes"/> (the 4-64 KiB sequence of <c>jembench io --pipe</c>), write its first and last
/// byte, read them back, return it. The baseline is <see cref="MemoryPool{T}.Shared"/>, what code that
/// takes a <see cref="MemoryPool{T}"/> gets by default (an owner object per rent over a pooled array);
/// <see cref="ArrayPool{T}.Shared"/> with no owner at all, as <c>Pipe</c> uses it, is the floor.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees them in [GlobalCleanup].")]
[SuppressMessage("Performance", "CA1822:Mark members as static", Justification = "BenchmarkDotNet runs instance methods.")]
public class MemoryPoolBenchmarks
{
    /// <summary>How many sizes the rows cycle through.</summary>
    public const int Sizes = 1024;

    private static readonly int[] SegmentSizes = [.. Enumerable.Range(0, Sizes).Select(i => PipeStreamPattern.SegmentSize(i))];
    private JemMemoryPool? _jem;
    private int _next;

    /// <summary>The native pool of the <see cref="Jem"/> row (kept blocks warmed by the first rents).</summary>
    [GlobalSetup]
    public void CreatePool() => _jem = new JemMemoryPool();

    /// <summary>Checks the row that ran: its result on a fresh cycle of sizes, and that it gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(Shared))]
    public void CheckShared() => CheckAndDispose("MemoryPool<byte>.Shared", Shared);

    /// <summary>Checks the row that ran: its result on a fresh cycle of sizes, and that it gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(ArrayPoolShared))]
    public void CheckArrayPoolShared() => CheckAndDispose("ArrayPool<byte>.Shared", ArrayPoolShared);

    /// <summary>Checks the row that ran as the others, and the pool's books: every block returned, none set aside.</summary>
    [GlobalCleanup(Target = nameof(Jem))]
    public void CheckJem() => CheckAndDispose("JemMemoryPool", Jem, () =>
    {
        JemMemoryPoolStatistics books = BrokenResultSwitch.Corrupt(_jem!.GetStatistics());
        ResultChecks.Equal("micro memory pool: JemMemoryPool", 0L, books.OutstandingCount, "blocks rented and not returned");
        ResultChecks.Equal("micro memory pool: JemMemoryPool", 0L, books.SetAsideCount, "blocks of owners dropped without Dispose");
    });

    /// <summary><see cref="MemoryPool{T}.Shared"/>: an owner per rent over an <see cref="ArrayPool{T}.Shared"/> array.</summary>
    [Benchmark(Baseline = true, Description = "MemoryPool<byte>.Shared: Rent(4-64 KiB) + write + Dispose()")]
    public int Shared()
    {
        using IMemoryOwner<byte> owner = MemoryPool<byte>.Shared.Rent(NextSize());
        return WriteAndRead(owner.Memory.Span);
    }

    /// <summary><see cref="ArrayPool{T}.Shared"/> with no owner object, as <c>Pipe</c> uses it: the floor.</summary>
    [Benchmark(Description = "ArrayPool<byte>.Shared: Rent(4-64 KiB) + write + Return() (no owner)")]
    public int ArrayPoolShared()
    {
        byte[] array = ArrayPool<byte>.Shared.Rent(NextSize());
        int value = WriteAndRead(array);
        ArrayPool<byte>.Shared.Return(array);
        return value;
    }

    /// <summary><see cref="JemMemoryPool"/>: a checked owner per rent over a kept native block.</summary>
    [Benchmark(Description = "JemMemoryPool: Rent(4-64 KiB) + write + Dispose()")]
    public int Jem()
    {
        using IMemoryOwner<byte> owner = _jem!.Rent(NextSize());
        return WriteAndRead(owner.Memory.Span);
    }

    private static int WriteAndRead(Span<byte> block)
    {
        block[0] = 3;
        block[^1] = 4;
        return block[0] + block[^1];
    }

    private int NextSize() => SegmentSizes[_next++ & (Sizes - 1)];

    private void CheckAndDispose(string row, Func<int> rent, Action? more = null)
    {
        string name = $"micro memory pool: {row}";
        try
        {
            int sum = 0;
            for (int i = 0; i < Sizes; i++)
            {
                sum += rent();
            }

            ResultChecks.Equal(name, 7 * Sizes, BrokenResultSwitch.Corrupt(sum), $"the bytes written and read back over {Sizes} rents");
            MicroChecks.FreesEverything(name, () => rent());
            more?.Invoke();
        }
        finally
        {
            _jem?.Dispose();
        }
    }
}
