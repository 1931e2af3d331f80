using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites.BlockSources;

namespace jemalloc.Benchmarks.Suites;

/// <summary>
/// The <c>alloc --threads</c> suite: the <c>alloc</c> suite's small allocations on several threads
/// at once. Each operation releases <see cref="Threads"/> parked threads together (a barrier); each
/// makes <see cref="RoundsPerOperation"/> rounds of <see cref="Parameter"/> allocations of the
/// single-thread suite's sizes, writes a mark to the first and last byte of each, reads both back
/// and frees the block; the operation ends when every thread is done. <see cref="FreedOn"/> says
/// which thread frees: the allocating one, or the next one in a ring (producer-consumer, each block
/// freed by another thread). The same allocators as the single-thread suite:
/// C <c>malloc</c>, jemalloc, mimalloc, <see cref="FixedBuffer{T}"/>, <c>new byte[]</c> and
/// <see cref="ArrayPool{T}"/>.
/// </summary>
/// <remarks>
/// The result is the sum over every block of its size and both marks, which depend on the thread,
/// round and index, so a block read by the wrong thread, twice, or not at all changes it. A thread
/// that throws or does not finish within <see cref="OperationTimeout"/> fails the benchmark (see
/// <see cref="WorkerTeam"/>).
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public class AllocThreadsBenchmarks
{
    /// <summary>The rounds of <see cref="Parameter"/> allocations each thread makes per operation: more work per release of the threads.</summary>
    public const int RoundsPerOperation = 8;

    /// <summary>The blocks a thread hands to the next one at a time (<see cref="FreedOn.NextThread"/>).</summary>
    public const int BatchSize = 64;

    /// <summary>How long one operation may take before it fails the benchmark.</summary>
    public static readonly TimeSpan OperationTimeout = TimeSpan.FromMinutes(10);

    // Each thread's counters sit on their own 128-byte line, so the threads do not share a cache line.
    private const int Stride = 16;

    private int[] _sizes = [];
    private nint[][] _pointers = [];
    private byte[][][] _arrays = [];
    private FixedBuffer<byte>[][] _buffers = [];
    private long[] _totals = [];
    private long[] _published = [];
    private long[] _consumed = [];
    private WorkerTeam? _team;
    private long _expected;
    private long _lastResult;

    /// <summary>The allocation counts given on the command line.</summary>
    public static IEnumerable<long> Counts => SuiteParameters.Sizes;

    /// <summary>The thread counts given on the command line.</summary>
    public static IEnumerable<int> ThreadCounts => SuiteParameters.Threads;

    /// <summary>Allocations per thread per round.</summary>
    [ParamsSource(nameof(Counts))]
    public long Parameter { get; set; }

    /// <summary>The threads released together for each operation.</summary>
    [ParamsSource(nameof(ThreadCounts))]
    public int Threads { get; set; }

    /// <summary>Which thread frees the blocks.</summary>
    [Params(FreedOn.AllocatingThread, FreedOn.NextThread)]
    public FreedOn FreedOn { get; set; }

    /// <summary>The name this benchmark's result checks carry.</summary>
    public string CheckName => $"alloc --threads {Threads} x{Parameter}, freed on {(FreedOn == FreedOn.NextThread ? "the next thread" : "the allocating thread")}";

    /// <summary>Draws the sizes (the single-thread suite's sequence), the expected result, and starts the threads.</summary>
    [GlobalSetup]
    public void Setup()
    {
        int count = checked((int)Parameter);
        _sizes = SmallObjectWorkload.DrawSizes(AllocBenchmarks.AllocationSizes, count, seed: 2048, out _);
        // The next-thread ring holds two rounds, so a thread can make a round while the next frees the last.
        int capacity = FreedOn == FreedOn.NextThread ? checked(2 * count) : count;
        _pointers = [.. Enumerable.Range(0, Threads).Select(_ => new nint[capacity])];
        _arrays = [.. Enumerable.Range(0, Threads).Select(_ => new byte[capacity][])];
        _buffers = [.. Enumerable.Range(0, Threads).Select(_ => new FixedBuffer<byte>[capacity])];
        _totals = new long[Threads * Stride];
        _published = new long[Threads * Stride];
        _consumed = new long[Threads * Stride];
        _expected = 0;
        for (int thread = 0; thread < Threads; thread++)
        {
            for (int round = 0; round < RoundsPerOperation; round++)
            {
                for (int i = 0; i < count; i++)
                {
                    _expected += _sizes[i] + 2 * Mark(thread, round, i);
                }
            }
        }

        _team = new WorkerTeam(Threads, "jembench alloc");
    }

    /// <summary>The C library's allocator, as .NET exposes it.</summary>
    [Benchmark(Baseline = true, Description = "NativeMemory.Alloc/Free (C malloc)")]
    public long NativeMemoryAllocFree() => _lastResult = Measure<CMallocBlocks, nint>(_pointers);

    /// <summary>jemalloc's <c>malloc</c>/<c>free</c>.</summary>
    [Benchmark(Description = "Jem.Malloc/Free")]
    public long JemMallocFree() => _lastResult = Measure<JemMallocBlocks, nint>(_pointers);

    /// <summary>The native calls a <see cref="FixedBuffer{T}"/> makes (<c>malloc</c>, the <c>sdallocx</c> export), with its zeroing.</summary>
    [Benchmark(Description = "je_malloc + clear/je_sdallocx")]
    public long JemSizedFreeCleared() => _lastResult = Measure<JemClearedBlocks, nint>(_pointers);

    /// <summary>mimalloc 2.0's <c>mi_malloc</c>/<c>mi_free</c> (left out of the run, with a message, where the library is missing).</summary>
    [Benchmark(Description = "mimalloc mi_malloc/mi_free")]
    public long MimallocMallocFree()
    {
        if (!Mimalloc.IsAvailable)
        {
            throw new InvalidOperationException(Mimalloc.MissingMessage);
        }

        return _lastResult = Measure<MimallocBlocks, nint>(_pointers);
    }

    /// <summary>Zeroed <see cref="FixedBuffer{T}"/>s created and freed one by one; compare with "je_malloc + clear/je_sdallocx".</summary>
    [Benchmark(Description = "new FixedBuffer<byte> + Free")]
    public long FixedBufferCreateFree() => _lastResult = Measure<FixedBufferBlocks, FixedBuffer<byte>>(_buffers);

    /// <summary>Managed arrays, each dropped for the garbage collector once read.</summary>
    [Benchmark(Description = "new byte[], dropped")]
    public long ManagedArrays() => _lastResult = Measure<ManagedArrayBlocks, byte[]>(_arrays);

    /// <summary>Arrays rented from the shared pool and returned once read.</summary>
    [Benchmark(Description = "ArrayPool<byte>.Shared Rent/Return")]
    public long PooledArrays() => _lastResult = Measure<PooledArrayBlocks, byte[]>(_arrays);

    /// <summary>Checks the last operation's result and stops the threads.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _team?.Dispose();
        _team = null;
        ResultChecks.Equal(CheckName, _expected, BrokenResultSwitch.Corrupt(_lastResult),
            "sum of the sizes and of both marks of every block, read back before each free");
    }

    /// <summary>The mark of block <paramref name="index"/> of a round: differs between threads and rounds.</summary>
    private static byte Mark(int thread, int round, int index) => (byte)(index + (7 * thread) + (13 * round));

    private long Measure<TSource, TBlock>(TBlock[][] blocks)
        where TSource : struct, IBlockSource<TBlock>
    {
        WorkerTeam team = _team ?? throw new InvalidOperationException("The suite's threads were not started: GlobalSetup did not run.");
        Array.Clear(_totals);
        if (FreedOn == FreedOn.NextThread)
        {
            Array.Clear(_published);
            Array.Clear(_consumed);
            team.Run(thread => FreeOnNextThread<TSource, TBlock>(thread, blocks), OperationTimeout);
        }
        else
        {
            team.Run(thread => FreeOnAllocatingThread<TSource, TBlock>(thread, blocks[thread]), OperationTimeout);
        }

        long total = 0;
        for (int thread = 0; thread < Threads; thread++)
        {
            total += _totals[thread * Stride];
        }

        return total;
    }

    /// <summary>One thread: each round, all its blocks made and marked, then each read back and freed.</summary>
    private void FreeOnAllocatingThread<TSource, TBlock>(int thread, TBlock[] blocks)
        where TSource : struct, IBlockSource<TBlock>
    {
        int[] sizes = _sizes;
        long total = 0;
        for (int round = 0; round < RoundsPerOperation; round++)
        {
            for (int i = 0; i < sizes.Length; i++)
            {
                blocks[i] = TSource.Allocate(sizes[i], Mark(thread, round, i));
            }

            for (int i = 0; i < sizes.Length; i++)
            {
                total += TSource.ReadAndFree(blocks[i], sizes[i]);
                blocks[i] = default!;
            }
        }

        _totals[thread * Stride] = total;
    }

    /// <summary>
    /// One thread of the ring: makes its blocks in batches into its own ring (two rounds long),
    /// publishing how far it got, and reads and frees whatever the previous thread published,
    /// until it has made all its blocks and freed all of the previous thread's. It waits for room
    /// when the next thread is a whole ring behind.
    /// </summary>
    /// <exception cref="TimeoutException">No progress was possible for <see cref="OperationTimeout"/>.</exception>
    private void FreeOnNextThread<TSource, TBlock>(int thread, TBlock[][] rings)
        where TSource : struct, IBlockSource<TBlock>
    {
        int[] sizes = _sizes;
        int previous = (thread + Threads - 1) % Threads;
        TBlock[] mine = rings[thread];
        TBlock[] theirs = rings[previous];
        long blocks = (long)RoundsPerOperation * sizes.Length;

        // Where this thread's production is: blocks made, index in the round, round, ring slot.
        long made = 0;
        int makeIndex = 0, makeRound = 0, makeSlot = 0;
        // Where its consumption of the previous thread's ring is: blocks freed, index in the round, ring slot.
        long freed = 0;
        int freeIndex = 0, freeSlot = 0;
        long total = 0;
        long deadline = Environment.TickCount64 + (long)OperationTimeout.TotalMilliseconds;
        var spinner = default(SpinWait);
        while (made < blocks || freed < blocks)
        {
            bool progressed = false;
            long room = mine.Length - (made - Volatile.Read(ref _consumed[thread * Stride]));
            long batch = Math.Min(Math.Min(BatchSize, blocks - made), room);
            for (long k = 0; k < batch; k++)
            {
                mine[makeSlot] = TSource.Allocate(sizes[makeIndex], Mark(thread, makeRound, makeIndex));
                makeSlot = makeSlot + 1 == mine.Length ? 0 : makeSlot + 1;
                if (++makeIndex == sizes.Length)
                {
                    makeIndex = 0;
                    makeRound++;
                }
            }

            if (batch > 0)
            {
                made += batch;
                Volatile.Write(ref _published[thread * Stride], made);
                progressed = true;
            }

            long available = Volatile.Read(ref _published[previous * Stride]);
            if (freed < available)
            {
                for (long k = freed; k < available; k++)
                {
                    total += TSource.ReadAndFree(theirs[freeSlot], sizes[freeIndex]);
                    theirs[freeSlot] = default!;
                    freeSlot = freeSlot + 1 == theirs.Length ? 0 : freeSlot + 1;
                    freeIndex = freeIndex + 1 == sizes.Length ? 0 : freeIndex + 1;
                }

                freed = available;
                Volatile.Write(ref _consumed[previous * Stride], freed);
                progressed = true;
            }

            if (!progressed)
            {
                if (Environment.TickCount64 > deadline)
                {
                    throw new TimeoutException($"Thread {thread} made {made:N0} and freed {freed:N0} of {blocks:N0} blocks, then waited for its neighbours for longer than {OperationTimeout}.");
                }

                // Yield to the neighbours (this machine may have fewer cores than threads), never sleep a whole millisecond.
                spinner.SpinOnce(sleep1Threshold: -1);
            }
            else
            {
                spinner.Reset();
            }
        }

        _totals[thread * Stride] = total;
    }
}
