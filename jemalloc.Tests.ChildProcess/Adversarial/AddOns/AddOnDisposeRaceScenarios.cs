using jemalloc.Parquet;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: a Dispose racing use in the Parquet add-on: a reader disposed under a read on another
/// thread refuses and never crashes.
/// </summary>
internal static class AddOnDisposeRaceScenarios
{
    internal const string ReaderDisposedUnderRead = "addon-reader-disposed-under-read";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[ReaderDisposedUnderRead] = ReaderDisposedUnderReads;
    }

    /// <summary>Dispose from another thread while a read runs, at varied delays: refused or before the read, never under it.</summary>
    private static void ReaderDisposedUnderReads()
    {
        // A read of a million rows takes a few milliseconds; the dispose comes 0 to 2 ms after it starts.
        const int rows = 1_000_000;
        const int rounds = 100;
        string folder = Directory.CreateTempSubdirectory("jemalloc-addon-scenario-").FullName;
        try
        {
            string path = Path.Combine(folder, "values.parquet");
            using (var values = new HugeArray<long>(rows, 3L))
            {
                new NativeParquetWriter().Add("values", values).Write(path);
            }

            int refused = 0;
            for (int round = 0; round < rounds; round++)
            {
                var reader = new NativeParquetReader(path);
                using var started = new Barrier(2);
                var read = new Thread(() =>
                {
                    started.SignalAndWait();
                    try
                    {
                        using HugeArray<long> column = reader.ReadColumn<long>("values");
                        Check.Equal(3L * rows, column.VectorSum(), "a read that a dispose raced");
                    }
                    catch (ObjectDisposedException)
                    {
                        // The dispose came first.
                    }
                });
                read.Start();
                started.SignalAndWait();
                Thread.Sleep(round % 3);
                while (true)
                {
                    try
                    {
                        reader.Dispose();
                        break;
                    }
                    catch (InvalidOperationException)
                    {
                        refused++;
                    }
                }

                read.Join();
                Check.Throws<ObjectDisposedException>("a read after Dispose", () => reader.ReadColumn<long>("values"));
            }

            Check.Info($"INFO {refused} dispose(s) refused over {rounds} rounds");
            Check.True(refused > 0, "some dispose met a read");
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}
