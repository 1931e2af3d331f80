using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Files without rows, written by ParquetSharp and by DuckDB, read as empty nullable columns (a native
/// array keeps its one element, the column's length is 0), while a non-nullable read says to use
/// <see cref="NativeParquetReader.ReadNullableColumn{T}(string)"/>; row groups without rows between
/// others are passed over. DuckDB checks the files both ways.
/// </summary>
// It compares the ledger's process-wide counts, so it runs alone (see LedgerBalanced).
[Collection(LedgerBalancedAlone.Name)]
public sealed class ZeroRowTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(3)]
    public void A_ParquetSharp_file_without_rows_reads_as_empty_nullable_columns(int emptyGroups)
    {
        string path = WriteGroups($"empty-{emptyGroups}.parquet", Enumerable.Repeat(0, emptyGroups).ToArray());
        long live = AllocationLedger.LiveCount;
        using (var reader = new NativeParquetReader(path))
        {
            Assert.Equal(0, reader.RowCount);
            Assert.Equal(emptyGroups, reader.RowGroupCount);
            using NullableColumn<long> required = reader.ReadNullableColumn<long>("v");
            using NullableColumn<double> optional = reader.ReadNullableColumn<double>("n", AllocationOptions.WithHugePages);
            foreach ((long length, long nulls, long arrayLength) in new[] { (required.Length, required.NullCount, required.Values.Length), (optional.Length, optional.NullCount, optional.Values.Length) })
            {
                Assert.Equal(0, length);
                Assert.Equal(0, nulls);
                Assert.Equal(1, arrayLength);
            }

            Assert.Equal(0L, required.Values[0]);
            Assert.Equal(1, optional.Validity.Length);
            Assert.Throws<ArgumentOutOfRangeException>(() => optional.IsNull(0));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
        using var duck = new DuckDb();
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM '{path}'"));
    }

    [Fact]
    public void A_non_nullable_read_of_a_file_without_rows_throws_InvalidOperationException_pointing_at_ReadNullableColumn()
    {
        string path = WriteGroups("none.parquet", [0]);
        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        var error = Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("v"));
        Assert.Contains("ReadNullableColumn", error.Message, StringComparison.Ordinal);
        Assert.Contains("'v'", error.Message, StringComparison.Ordinal);
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("Int64", error.Message, StringComparison.Ordinal);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_DuckDB_file_without_rows_reads_as_empty_nullable_columns()
    {
        string path = _folder.File("duck-empty.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT i::BIGINT AS id, i::DOUBLE AS d, (i % 2 = 0) AS flag FROM range(0) r(i)) TO '{path}' (FORMAT parquet)");
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM '{path}'"));

        using var reader = new NativeParquetReader(path);
        Assert.Equal(0, reader.RowCount);
        using NullableColumn<long> id = reader.ReadNullableColumn<long>("id");
        using NullableColumn<double> d = reader.ReadNullableColumn<double>("d");
        using NullableColumn<bool> flag = reader.ReadNullableColumn<bool>("flag");
        Assert.Equal(0, id.Length + d.Length + flag.Length);
        Assert.Equal(0, id.NullCount + d.NullCount + flag.NullCount);
        Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<double>("d"));
    }

    [Fact]
    public void An_empty_column_is_written_as_a_file_without_rows()
    {
        string source = WriteGroups("source.parquet", []);
        string copy = _folder.File("copy.parquet");
        using (var reader = new NativeParquetReader(source))
        using (NullableColumn<double> empty = reader.ReadNullableColumn<double>("n"))
        {
            new NativeParquetWriter().Add("n", empty).Write(copy);
        }

        using var duck = new DuckDb();
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM '{copy}'"));
        using var again = new NativeParquetReader(copy);
        Assert.Equal(0, again.RowCount);
        using NullableColumn<double> read = again.ReadNullableColumn<double>("n");
        Assert.Equal(0, read.Length);
    }

    [Fact]
    public void Row_groups_without_rows_between_others_are_passed_over()
    {
        // Groups of 3, 0, 2, 0 and 4 rows.
        string path = WriteGroups("gaps.parquet", [3, 0, 2, 0, 4]);
        using var reader = new NativeParquetReader(path);
        Assert.Equal(9, reader.RowCount);
        Assert.Equal(5, reader.RowGroupCount);

        using HugeArray<long> v = reader.ReadColumn<long>("v");
        using NullableColumn<double> n = reader.ReadNullableColumn<double>("n");
        using var duck = new DuckDb();
        long row = 0;
        duck.Query($"SELECT v, n FROM '{path}'", record =>
        {
            Assert.Equal(record.GetInt64(0), v[row]);
            Assert.Equal(record.IsDBNull(1), n.IsNull(row));
            Assert.Equal(record.IsDBNull(1) ? 0.0 : record.GetDouble(1), n.Values[row]);
            row++;
        });
        Assert.Equal(9, row);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) - count(n) FROM '{path}'"), n.NullCount);
        Assert.Equal(3, n.NullCount);
    }

    // A required INT64 column "v" (the row's number plus 100) and an optional DOUBLE column "n" (null on
    // every third row), in row groups of the given sizes, written by ParquetSharp itself.
    private string WriteGroups(string name, int[] groupRows)
    {
        string path = _folder.File(name);
        var columns = new Column[] { new Column<long>("v"), new Column<double?>("n") };
        using var file = new ParquetFileWriter(path, columns);
        long row = 0;
        foreach (int rows in groupRows)
        {
            using RowGroupWriter group = file.AppendRowGroup();
            long[] v = [.. Enumerable.Range(0, rows).Select(i => row + i + 100)];
            double?[] n = [.. Enumerable.Range(0, rows).Select(i => (row + i) % 3 == 0 ? (double?)null : (row + i) * 0.5)];
            using (LogicalColumnWriter<long> writer = group.NextColumn().LogicalWriter<long>())
            {
                writer.WriteBatch(v);
            }

            using (LogicalColumnWriter<double?> writer = group.NextColumn().LogicalWriter<double?>())
            {
                writer.WriteBatch(n);
            }

            row += rows;
        }

        file.Close();
        return path;
    }
}
