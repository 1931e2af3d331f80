using System.Diagnostics;
using ParquetSharp;
using Xunit.Abstractions;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// A Parquet file of more than 2^31 rows, written from native columns and read back into one: the
/// rows past <see cref="int.MaxValue"/> land where they belong. A nullable BOOLEAN column keeps the
/// file small and the run short (one byte a value in memory, one bit in the file) while going
/// through the same read path as every direct type (values decoded in place, nulls spread from the
/// end back, validity bits past bit 2^31). It touches about 2.3 GiB at a time: the source columns
/// are freed before the file is read.
/// </summary>
public sealed class PastTwoBillionRowsTests(ITestOutputHelper output) : IDisposable
{
    private const long Boundary = 1L << 31;
    private const long Rows = Boundary + 1000;

    // The generator: a value is true when its row is a multiple of 3 or of 7, and a row is null
    // when it is 4 mod 5. Together they repeat every 105 rows, which is also a whole number of
    // bitmap bytes (105 * 8 bits), so both columns are filled by copying one period over and over.
    private const int Period = 105;

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private static bool ValueAt(long row) => row % 3 == 0 || row % 7 == 0;

    private static bool ValidAt(long row) => row % 5 != 4;

    [Fact]
    public void A_nullable_column_of_more_than_2_pow_31_rows_is_written_and_read_back_past_int_MaxValue()
    {
        string path = _folder.File("past-2-pow-31.parquet");
        var clock = Stopwatch.StartNew();
        using (var values = new HugeArray<bool>(Rows))
        using (var validity = new HugeArray<byte>((Rows + 7) / 8))
        {
            FillPeriodic(values, Period, ValueAt);
            FillPeriodic(validity, Period, bitmapByte => BitmapByte(bitmapByte));
            new NativeParquetWriter { Compression = Compression.Snappy, RowGroupSize = 1L << 24 }
                .Add("flag", values, validity)
                .Write(path);
        }

        TimeSpan written = clock.Elapsed;
        output.WriteLine($"wrote {Rows:N0} rows in {written.TotalSeconds:F1} s; file {new FileInfo(path).Length:N0} bytes");

        using var reader = new NativeParquetReader(path);
        Assert.Equal(Rows, reader.RowCount);
        Assert.Equal(129, reader.RowGroupCount); // 128 groups of 2^24 rows and one of 1000
        using NullableColumn<bool> column = reader.ReadNullableColumn<bool>("flag", AllocationOptions.Default);
        output.WriteLine($"read in {(clock.Elapsed - written).TotalSeconds:F1} s");
        Assert.Equal(Rows, column.Values.Length);

        long[] probes = [0, 1, 2, 3, 4, 104, 105, Boundary - 3, Boundary - 2, Boundary - 1, Boundary, Boundary + 1, Boundary + 2, Boundary + 3, Rows - 2, Rows - 1];
        foreach (long row in probes)
        {
            bool valid = (column.Validity[row >> 3] & (1 << (int)(row & 7))) != 0;
            Assert.True(ValidAt(row) == valid, $"row {row:N0}: valid {valid}, expected {ValidAt(row)}");
            Assert.True((ValidAt(row) && ValueAt(row)) == column.Values[row], $"row {row:N0}: value {column.Values[row]}");
        }

        // Whole-column figures from the generator's formula (per period, then the rows left over), never from the reader.
        (long trues, long nulls) = Count(Period);
        (long restTrues, long restNulls) = Count(Rows % Period);
        long expectedTrues = (Rows / Period * trues) + restTrues;
        long expectedNulls = (Rows / Period * nulls) + restNulls;
        Assert.Equal(expectedNulls, column.NullCount);
        Assert.Equal(expectedTrues, CountTrue(column.Values));
        output.WriteLine($"checked in {clock.Elapsed.TotalSeconds:F1} s in all");
    }

    private static (long Trues, long Nulls) Count(long rows)
    {
        long trues = 0, nulls = 0;
        for (long row = 0; row < rows; row++)
        {
            if (!ValidAt(row))
            {
                nulls++;
            }
            else if (ValueAt(row))
            {
                trues++;
            }
        }

        return (trues, nulls);
    }

    // Bitmap byte k holds rows 8k .. 8k + 7 (bit i % 8 of byte i / 8), Arrow's layout.
    private static byte BitmapByte(long index)
    {
        int bits = 0;
        for (int bit = 0; bit < 8; bit++)
        {
            if (ValidAt((index * 8) + bit))
            {
                bits |= 1 << bit;
            }
        }

        return (byte)bits;
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
