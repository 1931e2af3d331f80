using System.Buffers;
using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>
/// The measured operations, run in a worker process against the build of the library it was built
/// with. <see cref="Run"/> times a number of operations, then checks what they computed and what they
/// left allocated, outside the timed loop; a wrong result throws <see cref="ResultCheckException"/>.
/// The loops are written as the micro-benchmarks (jemalloc.Benchmarks/Micro) write them: the
/// structure copied from a field to a local, its <c>Length</c> read in the loop's condition.
/// </summary>
internal sealed unsafe class Workloads : IDisposable
{
    /// <summary>The bytes of each <see cref="FixedBuffer{T}"/>.</summary>
    internal const int SmallBufferSize = 64;

    /// <summary>The elements of the <see cref="SafeArray{T}"/> the loops go through (1M: 4 MiB).</summary>
    internal const int ArrayLength = 1 << 20;

    /// <summary>The size each pool rent asks for.</summary>
    internal const int PoolBlockSize = 4096;

    /// <summary>The elements asked for and written per <see cref="NativeBufferWriter{T}.GetSpan"/>.</summary>
    internal const int WriterChunk = 4096;

    /// <summary>The bytes one writer operation writes before it is disposed (64 MiB).</summary>
    internal const int WriterBytes = 64 << 20;

    /// <summary>
    /// A hidden switch for the tests: a measurement named in this environment variable fails its
    /// result check, so a test can see a wrong result fail the comparison (exit code 2).
    /// </summary>
    internal const string BreakVariable = "JEMALLOC_NET_PERFCOMPARE_BREAK";

    private const int WriterChunks = WriterBytes / WriterChunk;

    private static readonly string? Broken = Environment.GetEnvironmentVariable(BreakVariable);

    private readonly SafeArray<int> _array;
    private readonly nint _arrayPointer;
    private readonly JemMemoryPool _pool;

    // Element i of the array holds i + _arrayOffset; each pass of the write loop raises it by one, so
    // a pass that wrote nothing leaves values the check finds.
    private int _arrayOffset;

    // Each writer operation fills chunk c with (byte)(c + run), so no operation can pass on the bytes of an earlier one.
    private int _writerRuns;

    internal Workloads()
    {
        _array = new SafeArray<int>(ArrayLength);
        SafeArray<int> array = _array;
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = i;
        }

        _arrayPointer = _array.Pointer;
        _pool = new JemMemoryPool();
    }

    /// <summary>Runs <paramref name="operations"/> operations of the measurement <paramref name="name"/>, checks them and returns the time they took in ns, on the wall clock and in this thread's CPU time (-1 where there is none; see <see cref="ThreadClock"/>).</summary>
    /// <exception cref="ResultCheckException">The operations computed a wrong result or left memory allocated.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is no measurement.</exception>
    internal (double Wall, double Cpu) Run(string name, int operations) => name switch
    {
        "fixedbuffer" => FixedBufferCreateFree(operations),
        "safearray-sum" => SafeArraySum(operations),
        "safearray-write" => SafeArrayWrite(operations),
        "pool" => PoolRent(operations),
        "writer" => WriterFill(operations),
        "control" => SpanSum(operations),
        _ => throw new ArgumentException($"No measurement is named '{name}'.", nameof(name)),
    };

    public void Dispose()
    {
        _array.Dispose();
        _pool.Dispose();
    }

    private static (double Wall, double Cpu) FixedBufferCreateFree(int operations)
    {
        const int Last = SmallBufferSize - 1;
        ulong before = LiveBytes();
        long check = 0;
        var start = ThreadClock.Now();
        for (int i = 0; i < operations; i++)
        {
            var buffer = new FixedBuffer<byte>(SmallBufferSize);

            // 0 (a new buffer is zeroed, even on a block the previous operation wrote), then 1.
            check += buffer[Last];
            buffer[Last] = 1;
            check += buffer[Last];
            buffer.Free();
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        Check("fixedbuffer", check == operations, $"the bytes read sum to {operations} (a new buffer's last byte 0, then the 1 written), not {check}");
        var freed = new FixedBuffer<byte>(SmallBufferSize);
        freed.Free();
        Check("fixedbuffer", !freed.IsValid, "a freed buffer is invalid");
        CheckFreed("fixedbuffer", before);
        return elapsed;
    }

    private (double Wall, double Cpu) SafeArraySum(int operations)
    {
        int expected = ExpectedSum();
        long wrong = 0;
        var start = ThreadClock.Now();
        for (int pass = 0; pass < operations; pass++)
        {
            SafeArray<int> array = _array;
            int sum = 0;
            for (int i = 0; i < array.Length; i++)
            {
                sum += array[i];
            }

            wrong += sum == expected ? 0 : 1;
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        Check("safearray-sum", wrong == 0, $"{wrong} of {operations} sums differ from {expected}");
        return elapsed;
    }

    private (double Wall, double Cpu) SafeArrayWrite(int operations)
    {
        var start = ThreadClock.Now();
        for (int pass = 0; pass < operations; pass++)
        {
            int offset = ++_arrayOffset;
            SafeArray<int> array = _array;
            for (int i = 0; i < array.Length; i++)
            {
                array[i] = i + offset;
            }
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        var span = new ReadOnlySpan<int>((void*)_arrayPointer, ArrayLength);
        int misses = 0;
        for (int i = 0; i < span.Length; i++)
        {
            misses += span[i] == i + _arrayOffset ? 0 : 1;
        }

        Check("safearray-write", misses == 0, $"{misses} of {ArrayLength} elements do not hold their index + {_arrayOffset} after the last pass");
        return elapsed;
    }

    private (double Wall, double Cpu) SpanSum(int operations)
    {
        int expected = ExpectedSum();
        long wrong = 0;
        var start = ThreadClock.Now();
        for (int pass = 0; pass < operations; pass++)
        {
            var span = new ReadOnlySpan<int>((void*)_arrayPointer, ArrayLength);
            int sum = 0;
            for (int i = 0; i < span.Length; i++)
            {
                sum += span[i];
            }

            wrong += sum == expected ? 0 : 1;
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        Check("control", wrong == 0, $"{wrong} of {operations} sums differ from {expected}");
        return elapsed;
    }

    private (double Wall, double Cpu) PoolRent(int operations)
    {
        long check = 0;
        var start = ThreadClock.Now();
        for (int i = 0; i < operations; i++)
        {
            using IMemoryOwner<byte> owner = _pool.Rent(PoolBlockSize);
            Span<byte> block = owner.Memory.Span;
            block[0] = 3;
            block[^1] = 4;
            check += block[0] + block[^1];
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        Check("pool", check == 7L * operations, $"the bytes written and read back sum to {7L * operations}, not {check}");
        JemMemoryPoolStatistics books = _pool.GetStatistics();
        Check("pool", books.OutstandingCount == 0 && books.SetAsideCount == 0,
            $"every block is back in the pool ({books.OutstandingCount} rented, {books.SetAsideCount} set aside)");
        using (IMemoryOwner<byte> owner = _pool.Rent(PoolBlockSize))
        {
            Check("pool", owner.Memory.Length >= PoolBlockSize, $"a rented block holds at least {PoolBlockSize} bytes, not {owner.Memory.Length}");
        }

        return elapsed;
    }

    private (double Wall, double Cpu) WriterFill(int operations)
    {
        ulong before = LiveBytes();
        long wrong = 0;
        var start = ThreadClock.Now();
        for (int i = 0; i < operations; i++)
        {
            int run = _writerRuns++;
            using var writer = new NativeBufferWriter<byte>();
            for (int chunk = 0; chunk < WriterChunks; chunk++)
            {
                Span<byte> span = writer.GetSpan(WriterChunk);
                span[..WriterChunk].Fill(unchecked((byte)(chunk + run)));
                writer.Advance(WriterChunk);
            }

            // One chunk of each operation read back, a different one each time (4 KiB of 64 MiB).
            int sample = (int)((run * 7919L) % WriterChunks);
            bool right = writer.WrittenCount == WriterBytes
                && !writer.GetWrittenSpan((long)sample * WriterChunk, WriterChunk).ContainsAnyExcept(unchecked((byte)(sample + run)));
            wrong += right ? 0 : 1;
        }

        (double Wall, double Cpu) elapsed = ThreadClock.Since(start);
        Check("writer", wrong == 0, $"{wrong} of {operations} writers did not hold {WriterBytes} bytes as written");
        CheckFreed("writer", before);
        return elapsed;
    }

    // Each element holds its index + _arrayOffset: the sum wraps like an int.
    private int ExpectedSum() => unchecked((int)(((long)ArrayLength * (ArrayLength - 1) / 2) + ((long)ArrayLength * _arrayOffset)));

    // Bytes in live jemalloc allocations, exact (this thread's cache flushed). Never inside a timed loop.
    private static ulong LiveBytes() => Jem.GetStatistics(exact: true).Allocated;

    private static void CheckFreed(string name, ulong before)
    {
        ulong after = LiveBytes();
        Check(name, after == before, string.Create(CultureInfo.InvariantCulture, $"jemalloc's allocated bytes are back where they were ({before:N0}), not {after:N0}"));
    }

    private static void Check(string name, bool right, string what)
    {
        if (!right || name == Broken)
        {
            throw new ResultCheckException($"{name}: wrong result: expected {what}");
        }
    }
}
