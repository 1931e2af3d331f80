using System.Runtime.CompilerServices;
using static jemalloc.Tests.ChildProcess.Adversarial.RecordReentrancyScenarios;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: concurrent use of the one-writer index: readers of a NativeHashIndex racing growth,
/// removal and Dispose see only whole states; a batch lookup of millions of keys finishes against a
/// writer; a writer refused as a second writer leaves its thread free to use the index.
/// </summary>
internal static class RecordConcurrentUseScenarios
{
    internal const string RecordsIndexReadersVsWriter = "records-index-readers-vs-writer";
    internal const string RecordsBatchLookupVsWriter = "records-batch-lookup-vs-writer";
    internal const string RecordsRefusedWriterThenLookup = "records-refused-writer-then-lookup";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsIndexReadersVsWriter] = IndexReadersVsWriter;
        all[RecordsBatchLookupVsWriter] = BatchLookupVsWriter;
        all[RecordsRefusedWriterThenLookup] = RefusedWriterThenLookup;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(10);

    // Keys 0..Stable-1 are always present with value 2*key; the writer adds and removes the others
    // (the table grows and shrinks its runs), then disposes. Readers only ever see 2*key or nothing,
    // and after the dispose only ObjectDisposedException.
    private static void IndexReadersVsWriter()
    {
        const int stable = 1000;
        long rounds = 0;
        var stopwatch = System.Diagnostics.Stopwatch.StartNew();
        while (stopwatch.Elapsed < Budget)
        {
            var index = new NativeHashIndex<long>();
            for (long k = 0; k < stable; k++)
            {
                index.Add(k, 2 * k);
            }

            var disposed = new StrongBox<bool>(false);
            Check.Race("NativeHashIndex readers vs growth, removal and Dispose", TimeSpan.FromMilliseconds(300), 1,
                round =>
                {
                    for (long k = stable; k < stable + 20_000; k++)
                    {
                        index.Add(k, 2 * k);
                        if (k % 3 == 0)
                        {
                            _ = index.Remove(k - 1);
                        }
                    }

                    for (long k = stable; k < stable + 20_000; k++)
                    {
                        _ = index.Remove(k);
                    }

                    Volatile.Write(ref disposed.Value, true);
                    index.Dispose();
                },
                round => Read(index, stable, disposed),
                round => Read(index, stable, disposed));
            rounds++;
        }

        Check.Info($"INFO rounds={rounds}");
    }

    private static void Read(NativeHashIndex<long> index, int stable, StrongBox<bool> disposed)
    {
        var random = new Random(Environment.CurrentManagedThreadId);
        while (true)
        {
            bool wasDisposed = Volatile.Read(ref disposed.Value);
            long key = random.Next(stable + 20_000);
            bool found;
            long value;
            try
            {
                found = index.TryGetValue(key, out value);
            }
            catch (ObjectDisposedException)
            {
                Check.True(Volatile.Read(ref disposed.Value), "ObjectDisposedException only after Dispose");
                return;
            }

            if (found && value != 2 * key)
            {
                Check.Fail("NativeHashIndex reader", $"key {key} read {value}, expected {2 * key}");
            }

            if (key < stable && !found && !wasDisposed)
            {
                Check.Fail("NativeHashIndex reader", $"the always-present key {key} was not found");
            }
        }
    }

    // ---- Readers starved

    // One batch of 4M keys, far longer to look up than the writer's interval, while a writer sets a
    // value every 10 ms: the batch finishes with every value right, and the writer wrote meanwhile.
    private static void BatchLookupVsWriter()
    {
        const int count = 4 << 20;
        using var index = new NativeHashIndex<long>(count, AllocationOptions.Default);
        long[] keys = new long[count];
        for (int i = 0; i < count; i++)
        {
            keys[i] = i;
            index.Add(i, 2L * i);
        }

        index.Add(-1, 0);
        long[] values = new long[count];
        long writes = 0;
        bool stop = false;
        Exception? writerError = null;
        var writer = new Thread(() =>
        {
            try
            {
                for (long v = 1; !Volatile.Read(ref stop); v++)
                {
                    _ = index.Set(-1, v);
                    Interlocked.Increment(ref writes);
                    Thread.Sleep(10);
                }
            }
            catch (Exception e)
            {
                writerError = e;
            }
        })
        { IsBackground = true };
        int found = -1;
        Exception? readerError = null;
        long writesBefore = 0, writesAfter = 0;
        var reader = new Thread(() =>
        {
            try
            {
                writesBefore = Interlocked.Read(ref writes);
                found = index.TryGetValues(keys, values);
                writesAfter = Interlocked.Read(ref writes);
            }
            catch (Exception e)
            {
                readerError = e;
            }
        })
        { IsBackground = true };
        writer.Start();
        while (Interlocked.Read(ref writes) == 0)
        {
            Thread.Sleep(1);
        }

        var stopwatch = System.Diagnostics.Stopwatch.StartNew();
        reader.Start();
        bool finished = reader.Join(TimeSpan.FromSeconds(30));
        Volatile.Write(ref stop, true);
        Check.True(writer.Join(HangLimit), "the writer stopped");
        Check.Info($"INFO finished={finished} seconds={stopwatch.Elapsed.TotalSeconds:F1} writesDuringRead={writesAfter - writesBefore}");
        if (!finished)
        {
            Check.Fail("TryGetValues of 4M keys while a writer sets a value every 10 ms", "did not finish in 30 s");
            return;
        }

        Check.True(readerError is null, "the reader threw nothing", $"{readerError}");
        Check.True(writerError is null, "the writer threw nothing", $"{writerError}");
        Check.Equal(count, found, "keys found");
        int wrong = 0;
        for (int i = 0; i < count; i++)
        {
            wrong += values[i] == 2L * i ? 0 : 1;
        }

        Check.Equal(0, wrong, "values read wrong");
        Check.True(writesAfter - writesBefore > 1, "the writer wrote while the batch was read", $"{writesAfter - writesBefore} writes");
    }

    // A writer is held inside a key's Equals; a second thread's Add and Remove are refused as a
    // second writer, and that thread's lookups afterwards are not taken for reentrant calls (the
    // refused write left no trace of having entered the index). Then the first write completes.
    private static void RefusedWriterThenLookup()
    {
        NativeHashIndex<HostileKey> index = NewIndex();
        using var inside = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        HostileKey.Arm(Callback.Equals, 0, () =>
        {
            inside.Set();
            _ = release.Wait(HangLimit);
        });
        Exception? writerError = null;
        var writer = new Thread(() =>
        {
            try
            {
                index.Add(new HostileKey(Keys), 2 * Keys);
            }
            catch (Exception e)
            {
                writerError = e;
            }
        })
        { IsBackground = true };
        writer.Start();
        Check.True(inside.Wait(HangLimit), "the writer is inside the key's Equals");
        Check.ThrowsExactly<InvalidOperationException>("Add while another thread writes", () => index.Add(new HostileKey(Keys + 1), 1));
        Check.ThrowsExactly<InvalidOperationException>("Remove while another thread writes", () => index.Remove(new HostileKey(1)));
        Check.NoThrow("a lookup on the refused writer's thread", () => index.TryGetValue(new HostileKey(3), out _));
        Check.NoThrow("a batch lookup on the refused writer's thread", () => index.TryGetValues([new HostileKey(3)], new long[1]));
        release.Set();
        Check.True(writer.Join(HangLimit), "the held writer finished");
        Check.True(writerError is null, "the held writer threw nothing", $"{writerError}");
        ExpectKeys("after the refused writes", index, added: Keys, removed: -1, failedKey: -1);
        Check.NoThrow("Dispose on the refused writer's thread", index.Dispose);
    }
}
