namespace jemalloc.Parquet.Tests;

/// <summary>
/// A write holds its columns with holds of its own: a caller's <c>Acquire</c>/<c>Release</c> neither
/// blocks it nor ends its hold, so no column can be disposed or reset under it.
/// </summary>
public sealed class WriterHoldTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void A_users_extra_Release_during_a_write_is_refused_and_the_write_completes()
    {
        const int rows = 4_000_000;
        using var values = new HugeArray<long>(rows, 2L);
        using var validity = new HugeArray<byte>((rows + 7) / 8, (byte)0xFF);
        string path = _folder.File("released.parquet");
        var writer = new NativeParquetWriter().Add("values", values, validity);
        int tried = 0;
        var write = new Thread(() => writer.Write(path));
        write.Start();
        while (write.IsAlive)
        {
            tried++;
            Assert.Throws<InvalidOperationException>(values.Release);
            Assert.Throws<InvalidOperationException>(validity.Release);
            if (values.Handle.LeaseCount > 0)
            {
                // Held by the write: a dispose is refused, whatever the caller released.
                Assert.Throws<InvalidOperationException>(values.Dispose);
            }
        }

        write.Join();
        Assert.True(tried > 0);
        Assert.Equal(0, values.Handle.LeaseCount);
        using var reader = new NativeParquetReader(path);
        using NullableColumn<long> read = reader.ReadNullableColumn<long>("values");
        Assert.Equal(2L * rows, read.Values.VectorSum());
        Assert.Equal(0, read.NullCount);
    }

    [Fact]
    public void A_column_the_caller_acquired_the_most_times_is_still_written()
    {
        using var values = new HugeArray<int>(100, 5);
        for (int i = 0; i < short.MaxValue; i++)
        {
            values.Acquire();
        }

        string path = _folder.File("acquired.parquet");
        new NativeParquetWriter().Add("values", values).Write(path);
        Assert.Equal(short.MaxValue, values.AcquireCount);
        for (int i = 0; i < short.MaxValue; i++)
        {
            values.Release();
        }

        using var reader = new NativeParquetReader(path);
        using HugeArray<int> read = reader.ReadColumn<int>("values");
        Assert.Equal(500, read.VectorSum());
    }
}
