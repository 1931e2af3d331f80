using System.Diagnostics;
using ParquetSharp;
using Xunit.Abstractions;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// A Parquet file of more than 2^31 rows, written from a native column and read back into one: the
/// rows past <see cref="int.MaxValue"/> land where they belong. A BOOLEAN column keeps the file
/// small (one bit a value) and the run as short as such a file allows (one byte a value in memory)
/// while going through the same read path as every direct type (ParquetSharp decodes each batch in
/// place, at its row of the native block). The column is REQUIRED: writing definition levels for
/// 2^31 rows makes the writer's side about twice as slow, and the nullable read path (validity bits,
/// nulls spread in place) takes the same long offsets, tested at small sizes in
/// <see cref="RoundTripTests"/>. It touches about 2 GiB at a time: the source column is freed
/// before the file is read.
/// </summary>
public sealed class PastTwoBillionRowsTests(ITestOutputHelper output) : IDisposable
{
    private const long Boundary = 1L << 31;
    private const long Rows = Boundary + 1000;

    // The generator: a value is true when its row is a multiple of 3 or of 7, a pattern of 21 rows,
    // filled by copying one run of whole periods over and over.
    private const int Period = 21;

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private static bool ValueAt(long row) => row % 3 == 0 || row % 7 == 0;

    [Fact]
    public void A_column_of_more_than_2_pow_31_rows_is_written_and_read_back_past_int_MaxValue()
    {
        string path = _folder.File("past-2-pow-31.parquet");
        var clock = Stopwatch.StartNew();
        using (var values = new HugeArray<bool>(Rows))
        {
            FillPeriodic(values, Period, ValueAt);
            new NativeParquetWriter { Compression = Compression.Snappy, RowGroupSize = 1L << 24 }
                .Add("flag", values)
                .Write(path);
        }

        TimeSpan written = clock.Elapsed;
        output.WriteLine($"wrote {Rows:N0} rows in {written.TotalSeconds:F1} s; file {new FileInfo(path).Length:N0} bytes");

        using var reader = new NativeParquetReader(path);
        Assert.Equal(Rows, reader.RowCount);
        Assert.Equal(129, reader.RowGroupCount); // 128 groups of 2^24 rows and one of 1000
        using HugeArray<bool> column = reader.ReadColumn<bool>("flag", AllocationOptions.Default);
        output.WriteLine($"read in {(clock.Elapsed - written).TotalSeconds:F1} s");
        Assert.Equal(Rows, column.Length);

        long[] probes = [0, 1, 2, 3, 6, 7, 20, 21, Boundary - 22, Boundary - 3, Boundary - 2, Boundary - 1, Boundary, Boundary + 1, Boundary + 2, Boundary + 3, Rows - 2, Rows - 1];
        foreach (long row in probes)
        {
            Assert.True(ValueAt(row) == column[row], $"row {row:N0}: {column[row]}, expected {ValueAt(row)}");
        }

        // The whole column's count of trues from the generator's formula (per period, then the rows
        // left over), never from the reader.
        long expectedTrues = (Rows / Period * CountValues(Period)) + CountValues(Rows % Period);
        Assert.Equal(expectedTrues, CountTrue(column));
        output.WriteLine($"checked in {clock.Elapsed.TotalSeconds:F1} s in all");
    }

    private static long CountValues(long rows)
    {
        long trues = 0;
        for (long row = 0; row < rows; row++)
        {
            trues += ValueAt(row) ? 1 : 0;
        }

        return trues;
    }

    // Element i is generator(i), for a generator that repeats every `period` elements: one managed
    // run of whole periods is copied over the native memory, starting at each chunk's own phase.
    private static void FillPeriodic<T>(HugeArray<T> array, int period, Func<long, T> generator)
        where T : unmanaged, IEquatable<T>
    {
        int run = period * 16_384;
        var template = new T[run + period];
        for (int i = 0; i < template.Length; i++)
        {
            template[i] = generator(i);
        }

        using MemoryLease<T> lease = array.Lease();
        long start = 0;
        foreach (Span<T> chunk in lease.GetChunks())
        {
            for (int done = 0; done < chunk.Length;)
            {
                int phase = (int)((start + done) % period);
                int count = Math.Min(run, chunk.Length - done);
                template.AsSpan(phase, count).CopyTo(chunk[done..]);
                done += count;
            }

            start += chunk.Length;
        }
    }

    private static long CountTrue(HugeArray<bool> values)
    {
        using MemoryLease<bool> lease = values.Lease();
        long count = 0;
        foreach (Span<bool> chunk in lease.GetChunks())
        {
            count += chunk.Count(true);
        }

        return count;
    }
}
