namespace jemalloc.Parquet.Tests;

/// <summary>
/// A reader or writer used by two threads at once: the second call, or a <c>Dispose</c> while a read
/// runs, throws <see cref="InvalidOperationException"/> and changes nothing; the call under way
/// finishes with the right values. It never reaches ParquetSharp's native objects after they are freed.
/// </summary>
public sealed class ConcurrentUseTests : IDisposable
{
    private const int Rows = 2_000_000;
    private const int Trials = 10;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Dispose_while_another_thread_reads_is_refused_and_the_read_returns_every_row()
    {
        string path = WriteSample();
        int refused = 0;
        for (int trial = 0; trial < Trials; trial++)
        {
            var reader = new NativeParquetReader(path);
            using var started = new Barrier(2);
            long sum = -1;
            Exception? readError = null;
            var read = new Thread(() =>
            {
                started.SignalAndWait();
                try
                {
                    using HugeArray<long> values = reader.ReadColumn<long>("values");
                    sum = values.VectorSum();
                }
                catch (Exception e)
                {
                    readError = e;
                }
            });
            read.Start();
            started.SignalAndWait();
            // Give the read a head start of 0 to 4 ms: a read of the column takes longer than that,
            // so the dispose lands before, inside and (rarely) after it over the trials.
            Thread.Sleep(trial % 5);
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
            // The read came first (all rows) or after the dispose (ObjectDisposedException), nothing between.
            if (readError is null)
            {
                Assert.Equal(ExpectedSum, sum);
            }
            else
            {
                Assert.IsType<ObjectDisposedException>(readError);
            }

            Assert.Throws<ObjectDisposedException>(() => reader.ReadColumn<long>("values"));
        }

        Assert.True(refused > 0, "some dispose landed inside a read");
    }

    [Fact]
    public void A_second_thread_reading_at_once_is_refused_and_the_first_read_is_exact()
    {
        using var reader = new NativeParquetReader(WriteSample());
        int refused = 0;
        for (int trial = 0; trial < Trials; trial++)
        {
            long[] sums = [-1, -1];
            Exception?[] errors = new Exception?[2];
            using var started = new Barrier(2);
            Thread[] threads = [.. Enumerable.Range(0, 2).Select(t => new Thread(() =>
            {
                started.SignalAndWait();
                try
                {
                    using HugeArray<long> values = reader.ReadColumn<long>("values");
                    sums[t] = values.VectorSum();
                }
                catch (Exception e)
                {
                    errors[t] = e;
                }
            }))];
            foreach (Thread thread in threads)
            {
                thread.Start();
            }

            foreach (Thread thread in threads)
            {
                thread.Join();
            }

            for (int t = 0; t < 2; t++)
            {
                if (errors[t] is null)
                {
                    Assert.Equal(ExpectedSum, sums[t]);
                }
                else
                {
                    Assert.IsType<InvalidOperationException>(errors[t]);
                    refused++;
                }
            }

            Assert.True(errors[0] is null || errors[1] is null, "one of the two reads ran");
        }

        Assert.True(refused > 0, "some read overlapped another");
        using HugeArray<long> after = reader.ReadColumn<long>("values");
        Assert.Equal(ExpectedSum, after.VectorSum());
    }

    [Fact]
    public void Adding_a_column_while_another_thread_writes_is_refused_and_the_file_has_the_columns_it_had()
    {
        using var values = new HugeArray<long>(Rows, 3L);
        using var extra = new HugeArray<long>(Rows, 4L);
        int refused = 0;
        for (int trial = 0; trial < 3; trial++)
        {
            string path = _folder.File($"add-during-write-{trial}.parquet");
            var writer = new NativeParquetWriter().Add("values", values);
            using var started = new Barrier(2);
            var write = new Thread(() =>
            {
                started.SignalAndWait();
                writer.Write(path);
            });
            write.Start();
            started.SignalAndWait();
            Thread.Sleep(1 + trial);
            while (write.IsAlive)
            {
                try
                {
                    writer.Add($"extra{refused}", extra);
                    break;
                }
                catch (InvalidOperationException)
                {
                    refused++;
                }
            }

            write.Join();
            // An Add that came before the write entered is in the file, whole; none lands inside it.
            using var reader = new NativeParquetReader(path);
            Assert.InRange(reader.ColumnCount, 1, 2);
            using HugeArray<long> read = reader.ReadColumn<long>("values");
            Assert.Equal(3L * Rows, read.VectorSum());
            if (reader.ColumnCount == 2)
            {
                using HugeArray<long> added = reader.ReadColumn<long>(reader.GetColumnName(1));
                Assert.Equal(4L * Rows, added.VectorSum());
            }
        }

        Assert.True(refused > 0, "some Add was tried inside a write");
    }

    private static long ExpectedSum => (long)Rows * (Rows - 1) / 2;

    private string WriteSample()
    {
        string path = _folder.File("sample.parquet");
        if (!File.Exists(path))
        {
            using var values = new HugeArray<long>(Rows);
            for (int i = 0; i < Rows; i++)
            {
                values[i] = i;
            }

            new NativeParquetWriter().Add("values", values).Write(path);
        }

        return path;
    }
}
