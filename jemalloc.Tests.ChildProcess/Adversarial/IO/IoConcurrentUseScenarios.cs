using System.Buffers;
using System.Collections.Concurrent;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: concurrent use of the one-writer I/O types: two threads hammer one
/// <see cref="NativeBufferWriter{T}"/> or one <see cref="NativeMemoryStream"/>. After every step the
/// counts stay inside the block (<c>WrittenCount &lt;= Capacity</c>, <c>WrittenSpan</c> no longer than
/// the block, a stream's <c>Length &lt;= Capacity</c>), or the step threw the documented
/// <see cref="InvalidOperationException"/> of a second writer (or another exception its documentation
/// names); never another exception, never a span past the block. Each two-writer scenario asserts that
/// both threads ran and that they met. A writer whose pins end on another thread (as a socket's
/// completion would) refuses growth while pinned and frees its block once they ended.
/// </summary>
internal static class IoConcurrentUseScenarios
{
    internal const string IoWriterTwoWriters = "io-writer-two-writers";
    internal const string IoWriterDetachAndClearVsWriter = "io-writer-detach-and-clear-vs-writer";
    internal const string IoStreamTwoWritersGrowable = "io-stream-two-writers-growable";
    internal const string IoStreamTwoWritersFixed = "io-stream-two-writers-fixed";
    internal const string IoStreamAndItsWriterUsedDirectly = "io-stream-and-its-writer-used-directly";
    internal const string IoWriterPinsEndedOnAnotherThread = "io-writer-pins-ended-on-another-thread";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[IoWriterTwoWriters] = WriterTwoWriters;
        all[IoWriterDetachAndClearVsWriter] = WriterDetachAndClearVsWriter;
        all[IoStreamTwoWritersGrowable] = () => StreamTwoWriters(fixedCapacity: false);
        all[IoStreamTwoWritersFixed] = () => StreamTwoWriters(fixedCapacity: true);
        all[IoStreamAndItsWriterUsedDirectly] = StreamAndItsWriterUsedDirectly;
        all[IoWriterPinsEndedOnAnotherThread] = WriterPinsEndedOnAnotherThread;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Two threads write into one writer through <c>GetSpan</c>/<c>GetMemory</c> and <c>Advance</c>
    /// (the second also reads <c>WrittenSpan</c>, <c>WrittenSequence</c> and resets the count).
    /// </summary>
    private static void WriterTwoWriters()
    {
        long live = AllocationLedger.LiveCount;
        var race = new RaceBook("writer two writers");
        using (var writer = new NativeBufferWriter<byte>())
        {
            long[] counts = Check.RaceUntil(race.What, Budget, firstBodyAtLeast: 20_000, int.MaxValue,
                i => race.Step(0, () =>
                {
                    Span<byte> span = writer.GetSpan(i % 64);
                    writer.Advance(Math.Min(span.Length, 1 + (i % 48)));
                }, () => CheckWriter(race, writer)),
                i => race.Step(1, () =>
                {
                    switch (i % 6)
                    {
                        case 0:
                        case 1:
                            Memory<byte> memory = writer.GetMemory(i % 100);
                            writer.Advance(Math.Min(memory.Length, 1 + (i % 40)));
                            break;
                        case 2:
                            writer.Advance(Math.Min((int)Math.Min(writer.FreeCapacity, int.MaxValue), 16));
                            break;
                        case 3:
                            ReadOnlySequence<byte> sequence = writer.WrittenSequence;
                            foreach (ReadOnlyMemory<byte> segment in sequence)
                            {
                                _ = segment.Span.Length;
                            }

                            break;
                        case 4:
                            if (writer.WrittenCount > 1 << 20)
                            {
                                writer.ResetWrittenCount();
                            }

                            break;
                        default:
                            _ = writer.WrittenSpan.Length;
                            break;
                    }
                }, () => CheckWriter(race, writer)));
            race.Finish(counts);
            CheckWriter(race, writer);
        }

        Check.Equal(live, AllocationLedger.LiveCount, "the writer's block was freed by its dispose");
    }

    /// <summary>
    /// One thread writes while another hands the block over (<c>DetachToSafeArray</c>) or clears it:
    /// the writer never counts elements past its (new, empty) block, and every hand-over holds
    /// exactly what its array says.
    /// </summary>
    private static void WriterDetachAndClearVsWriter()
    {
        long live = AllocationLedger.LiveCount;
        var race = new RaceBook("writer detach and clear vs writer");
        long detached = 0;
        using (var writer = new NativeBufferWriter<byte>())
        {
            long[] counts = Check.RaceUntil(race.What, Budget, firstBodyAtLeast: 20_000, int.MaxValue,
                i => race.Step(0, () =>
                {
                    Span<byte> span = writer.GetSpan(1 + (i % 200));
                    writer.Advance(Math.Min(span.Length, 1 + (i % 200)));
                }, () => CheckWriter(race, writer)),
                i => race.Step(1, () =>
                {
                    if (i % 3 == 0)
                    {
                        writer.Clear();
                        return;
                    }

                    if (writer.WrittenCount == 0)
                    {
                        return;
                    }

                    using SafeArray<byte> array = writer.DetachToSafeArray();
                    Interlocked.Increment(ref detached);
                    if (array.Length <= 0)
                    {
                        Check.Fail(race.What, $"a hand-over gave an array of {array.Length} elements");
                    }
                }, () => CheckWriter(race, writer)));
            race.Finish(counts);
            Check.True(Volatile.Read(ref detached) > 0, "some hand-overs succeeded", "no DetachToSafeArray ever succeeded");
        }

        Check.Equal(live, AllocationLedger.LiveCount, "every handed-over array and the writer's block were freed");
    }

    /// <summary>
    /// Two threads use one stream (over a growing writer, or over a 4 KiB array): writes, reads,
    /// seeks, positions, lengths, copies. Each step completes, or throws
    /// <see cref="InvalidOperationException"/> for the second writer (or, over the array,
    /// <see cref="NotSupportedException"/> for a write past its capacity); the length never passes
    /// the capacity.
    /// </summary>
    private static void StreamTwoWriters(bool fixedCapacity)
    {
        long live = AllocationLedger.LiveCount;
        var race = new RaceBook(fixedCapacity ? "stream over an array, two writers" : "growable stream, two writers");
        byte[] data = Enumerable.Range(1, 64).Select(i => (byte)i).ToArray();
        using (NativeMemoryStream stream = fixedCapacity ? new NativeMemoryStream(new SafeArray<byte>(4096)) : new NativeMemoryStream())
        {
            Action<int> body = i => race.Step(i & 1, () => StreamStep(stream, data, i), () => CheckStream(race, stream, fixedCapacity));
            long[] counts = Check.RaceUntil(race.What, Budget, firstBodyAtLeast: 20_000, int.MaxValue,
                i => body(2 * i),
                i => body((2 * i) + 1));
            race.Finish(counts);
            CheckStream(race, stream, fixedCapacity);
        }

        Check.Equal(live, AllocationLedger.LiveCount, "the stream's memory was freed by its dispose");
    }

    /// <summary>
    /// One thread writes and reads through a stream while another uses the stream's writer directly
    /// (<c>GetSpan</c>, <c>Advance</c>, <c>ResetWrittenCount</c>): both stay inside the block.
    /// </summary>
    private static void StreamAndItsWriterUsedDirectly()
    {
        long live = AllocationLedger.LiveCount;
        var race = new RaceBook("stream and its writer used directly");
        byte[] data = Enumerable.Range(1, 64).Select(i => (byte)i).ToArray();
        using (var writer = new NativeBufferWriter<byte>())
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            long[] counts = Check.RaceUntil(race.What, Budget, firstBodyAtLeast: 20_000, int.MaxValue,
                i => race.Step(0, () => StreamStep(stream, data, 2 * i), () => CheckStream(race, stream, fixedCapacity: false)),
                i => race.Step(1, () =>
                {
                    if (i % 5 == 0 && writer.WrittenCount > 1 << 16)
                    {
                        writer.ResetWrittenCount();
                        return;
                    }

                    Span<byte> span = writer.GetSpan(i % 50);
                    writer.Advance(Math.Min(span.Length, 1 + (i % 30)));
                }, () => CheckWriter(race, writer)));
            race.Finish(counts);
            CheckWriter(race, writer);
            CheckStream(race, stream, fixedCapacity: false);
        }

        Check.Equal(live, AllocationLedger.LiveCount, "the writer's block was freed by its dispose");
    }

    private static void StreamStep(NativeMemoryStream stream, byte[] data, int i)
    {
        Span<byte> buffer = stackalloc byte[48];
        switch ((i >> 1) % 11)
        {
            case 0:
            case 1:
                stream.Write(data, 0, 1 + (i % data.Length));
                break;
            case 2:
                stream.WriteByte((byte)i);
                break;
            case 3:
                _ = stream.Read(buffer);
                break;
            case 4:
                _ = stream.ReadByte();
                break;
            case 5:
                stream.Seek(i % 5000, SeekOrigin.Begin);
                break;
            case 6:
                stream.Position = (i * 7) % 4200;
                break;
            case 7:
                stream.SetLength((i * 13) % 4096);
                break;
            case 8:
                stream.Seek(i % 64, SeekOrigin.End);
                break;
            case 9:
                stream.CopyTo(Stream.Null, 100);
                break;
            default:
                _ = stream.ToArray().Length;
                break;
        }
    }

    private static void CheckWriter(RaceBook race, NativeBufferWriter<byte> writer)
    {
        // Read in this order: the count, then the capacity, which only grows while nobody hands the block over.
        long written = writer.WrittenCount;
        long capacity = writer.Capacity;
        if (written < 0 || (written > capacity && capacity != 0))
        {
            race.Bad($"WrittenCount {written:N0} is past Capacity {capacity:N0}");
        }

        // Its first and last elements are read: a span at a freed or null address would fault here.
        ReadOnlySpan<byte> span = writer.WrittenSpan;
        if (!span.IsEmpty)
        {
            _ = span[0] + span[^1];
        }

        capacity = writer.Capacity;
        if (span.Length > capacity && capacity != 0)
        {
            race.Bad($"WrittenSpan has {span.Length:N0} elements, past Capacity {capacity:N0}");
        }
    }

    private static void CheckStream(RaceBook race, NativeMemoryStream stream, bool fixedCapacity)
    {
        long length = stream.Length;
        long capacity = stream.Capacity;
        if (length < 0 || length > capacity || (fixedCapacity && capacity != 4096))
        {
            race.Bad($"Length {length:N0} is past Capacity {capacity:N0}");
        }

        if (stream.Position < 0)
        {
            race.Bad($"Position {stream.Position:N0} is negative");
        }
    }

    /// <summary>
    /// The books of a two-thread race: each thread's steps, the steps that found the other thread
    /// inside (the race happened), the refusals, and what went wrong (kept to the first few).
    /// </summary>
    private sealed class RaceBook(string what)
    {
        private int _inside;
        private long _met;
        private long _refused;
        private long _notSupported;
        private int _reported;

        public string What { get; } = what;

        /// <summary>
        /// Runs one step and then its check; a documented refusal is counted, any other exception is a
        /// failure. <see cref="NotSupportedException"/> is documented for a fixed stream's write past its
        /// capacity; <see cref="InvalidOperationException"/> (not <see cref="ObjectDisposedException"/>)
        /// for a second writer, an <c>Advance</c> past the free space, a hand-over of nothing, or a
        /// growth while the other thread's operation holds the block.
        /// </summary>
        public void Step(int thread, Action step, Action check)
        {
            try
            {
                if (Interlocked.Increment(ref _inside) > 1)
                {
                    Interlocked.Increment(ref _met);
                }

                try
                {
                    step();
                }
                finally
                {
                    Interlocked.Decrement(ref _inside);
                }

                check();
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                Interlocked.Increment(ref _refused);
            }
            catch (NotSupportedException)
            {
                Interlocked.Increment(ref _notSupported);
            }
            catch (Exception e)
            {
                Bad($"thread {thread}: {e.GetType().Name}: {e.Message}");
            }
        }

        public void Bad(string detail)
        {
            if (Interlocked.Increment(ref _reported) <= 10)
            {
                Check.Fail(What, detail);
            }
        }

        public void Finish(long[] counts)
        {
            Check.Info($"INFO {What}: steps={string.Join('/', counts)} met={Volatile.Read(ref _met)} refused={Volatile.Read(ref _refused)} not-supported={Volatile.Read(ref _notSupported)} bad={Volatile.Read(ref _reported)}");
            Check.True(counts.All(count => count > 0), $"{What}: both threads ran", string.Join('/', counts));
            Check.True(Volatile.Read(ref _met) > 0, $"{What}: the threads met", "no step ever found the other thread inside: the race did not happen");
        }
    }

    /// <summary>
    /// The writer's thread takes memories, pins them and hands each pin to another thread, which ends
    /// it a little later (a socket's completion), while the writer's thread keeps writing and asking
    /// for more room: a growth while pinned is refused with <see cref="InvalidOperationException"/>,
    /// otherwise the writer grows; the bytes written read back, and once every pin has ended the
    /// writer disposes and the ledger holds nothing.
    /// </summary>
    private static void WriterPinsEndedOnAnotherThread()
    {
        long live = AllocationLedger.LiveCount;
        long refusedGrowths = 0, growths = 0, refusedDisposes = 0;
        for (int round = 0; round < 20; round++)
        {
            var writer = new NativeBufferWriter<byte>();
            var pins = new BlockingCollection<MemoryHandle>();
            long expected = 0;
            var unpinner = new Thread(() =>
            {
                foreach (MemoryHandle pin in pins.GetConsumingEnumerable())
                {
                    Thread.SpinWait(200);
                    pin.Dispose();
                }
            });
            unpinner.Start();
            for (int i = 0; i < 20_000; i++)
            {
                try
                {
                    Memory<byte> memory = writer.GetMemory(1 + (i % 3000));
                    MemoryHandle pin = memory.Pin();
                    memory.Span[0] = (byte)expected;
                    writer.Advance(1);
                    expected++;
                    pins.Add(pin);
                    growths++;
                }
                catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                {
                    refusedGrowths++;
                }
            }

            pins.CompleteAdding();
            ReadOnlySpan<byte> written = writer.WrittenSpan;
            for (int k = 0; k < written.Length; k++)
            {
                if (written[k] != (byte)k)
                {
                    Check.Fail("the bytes written through pinned memories read back", $"byte {k} is {written[k]}");
                    break;
                }
            }

            Check.Equal(expected, writer.WrittenCount, "every pinned write was advanced");
            refusedDisposes += Check.UntilNotRefused(writer.Dispose);
            unpinner.Join();
            Check.Equal(live, AllocationLedger.LiveCount, "the writer freed its block once every pin ended");
        }

        Check.Info($"INFO pinned-writes={growths} refused-growths={refusedGrowths} refused-disposes={refusedDisposes}");
    }
}
