using System.Globalization;
using jemalloc.Benchmarks.Records;
using jemalloc.Parquet;
using ParquetSharp;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// The data of <c>jembench columnar</c>: column <c>c</c>, row <c>r</c> holds a pseudo-random whole
/// number below 2^20 (as a double), a function of (c, r) alone, so every sum is exact in any order
/// and the right results can be recomputed without the file.
/// </summary>
public static unsafe class ColumnarData
{
    /// <summary>Bits of every value: every column sum stays a whole number below 2^53 (exact) up to <see cref="MaxRows"/> rows.</summary>
    public const int ValueBits = 20;

    /// <summary>The most rows a column may have so that its sum stays exact in a double.</summary>
    public const long MaxRows = 1L << (53 - ValueBits);

    /// <summary>The largest number of columns.</summary>
    public const int MaxColumns = 1024;

    private const ulong Seed = 0x9E37_79B9_7F4A_7C15UL;

    /// <summary>The name of column <paramref name="column"/> in the file.</summary>
    public static string ColumnName(int column) => "c" + column.ToString(CultureInfo.InvariantCulture);

    /// <summary>The value at <paramref name="row"/> of <paramref name="column"/>.</summary>
    public static double ValueOf(int column, long row) => RecordData.Mix(RecordData.Mix(Seed + (ulong)column) + (ulong)row) >> (64 - ValueBits);

    /// <summary>
    /// The check value of row sums starting at row <paramref name="firstRow"/>: the sum, wrapping, of
    /// each row's sum times an odd weight of its row. Blocks of rows add up to the whole's value, and
    /// a change to any one row changes it (an odd weight has an inverse modulo 2^64).
    /// </summary>
    public static ulong RowCheckOf(ReadOnlySpan<double> rowSums, long firstRow)
    {
        ulong check = 0;
        for (int i = 0; i < rowSums.Length; i++)
        {
            check += (ulong)rowSums[i] * WeightOf(firstRow + i);
        }

        return check;
    }

    /// <summary>
    /// Generates <paramref name="columns"/> columns of <paramref name="rows"/> rows (native, on the
    /// library's default pages, all cores), writes them to a Parquet file compressed with <paramref name="codec"/>, and
    /// returns the right results. The columns are freed before it returns. The pages carry CRC-32
    /// checksums unless <paramref name="pageChecksums"/> is false.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The columns do not fit.</exception>
    /// <exception cref="IOException">The file cannot be written.</exception>
    public static ColumnarReference Write(string path, int columns, long rows, Compression codec, bool pageChecksums = true)
    {
        ArgumentNullException.ThrowIfNull(path);
        ArgumentOutOfRangeException.ThrowIfLessThan(columns, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(columns, MaxColumns);
        ArgumentOutOfRangeException.ThrowIfLessThan(rows, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(rows, MaxRows);
        var data = new HugeArray<double>[columns];
        try
        {
            var sums = new double[columns];
            for (int c = 0; c < columns; c++)
            {
                data[c] = new HugeArray<double>(rows);
                Fill(data[c], c);
                sums[c] = data[c].ParallelVectorSum();
            }

            ulong rowCheck = RowCheckOfColumns(data, rows);
            var writer = new NativeParquetWriter { Compression = codec, WritePageChecksums = pageChecksums };
            for (int c = 0; c < columns; c++)
            {
                writer.Add(ColumnName(c), data[c]);
            }

            writer.Write(path);
            return new ColumnarReference(sums, rowCheck);
        }
        finally
        {
            foreach (HugeArray<double>? column in data)
            {
                column?.Dispose();
            }
        }
    }

    /// <summary>The right row check of <paramref name="columns"/>, read without changing them.</summary>
    public static ulong RowCheckOfColumns(IReadOnlyList<HugeArray<double>> columns, long rows)
    {
        ArgumentNullException.ThrowIfNull(columns);
        var pointers = new nint[columns.Count];
        var holds = new List<MemoryHold>(columns.Count);
        try
        {
            for (int c = 0; c < columns.Count; c++)
            {
                holds.Add(columns[c].Hold());
                pointers[c] = columns[c].Pointer;
            }

            return RowCheckOfPointers(pointers, rows);
        }
        finally
        {
            foreach (MemoryHold hold in holds)
            {
                hold.Dispose();
            }
        }
    }

    private static ulong RowCheckOfPointers(nint[] pointers, long rows)
    {
        long blocks = (rows + ColumnarKernels.BlockRows - 1) / ColumnarKernels.BlockRows;
        var partial = new ulong[blocks];
        Parallel.For(0L, blocks, b =>
        {
            long first = b * ColumnarKernels.BlockRows;
            long end = Math.Min(rows, first + ColumnarKernels.BlockRows);
            ulong check = 0;
            for (long r = first; r < end; r++)
            {
                double sum = 0;
                foreach (nint column in pointers)
                {
                    sum += ((double*)column)[r];
                }

                check += (ulong)sum * WeightOf(r);
            }

            partial[b] = check;
        });
        ulong total = 0;
        foreach (ulong p in partial)
        {
            total += p;
        }

        return total;
    }

    private static ulong WeightOf(long row) => RecordData.Mix((ulong)row) | 1;

    private static void Fill(HugeArray<double> column, int index)
    {
        using MemoryHold hold = column.Hold();
        nint start = column.Pointer;
        long rows = column.Length;
        long blocks = (rows + ColumnarKernels.BlockRows - 1) / ColumnarKernels.BlockRows;
        Parallel.For(0L, blocks, b =>
        {
            long first = b * ColumnarKernels.BlockRows;
            long end = Math.Min(rows, first + ColumnarKernels.BlockRows);
            var values = (double*)start;
            for (long r = first; r < end; r++)
            {
                values[r] = ValueOf(index, r);
            }
        });
    }
}
