using System.Data.Common;

namespace jemalloc.Parquet.Tests;

/// <summary>Files DuckDB wrote (its own Parquet writer), read into native columns and checked element by element against DuckDB's reading of them.</summary>
public sealed class WrittenByDuckDbTests : IDisposable
{
    private const int Rows = 50_000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData("zstd")]
    [InlineData("snappy")]
    [InlineData("gzip")]
    [InlineData("uncompressed")]
    public void Every_value_and_null_matches_DuckDBs_own_reading_of_the_file(string codec)
    {
        string path = _folder.File($"duck-{codec}.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT
                    i::BIGINT AS id,
                    CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1.5 END::DOUBLE AS d,
                    (i % 100 - 50)::INTEGER AS n,
                    CASE WHEN i % 3 = 0 THEN NULL ELSE i % 30000 - 15000 END::SMALLINT AS s,
                    (i % 2 = 0) AS flag,
                    (i % 200)::UTINYINT AS ub,
                    (i * 0.25)::FLOAT AS f,
                    (i * 80000)::UINTEGER AS u,
                    (i::UBIGINT * 400000000000) AS ul,
                    CASE WHEN i % 4 = 0 THEN NULL ELSE i % 200 - 100 END::TINYINT AS t,
                    DATE '2020-01-01' + (i % 1000)::INTEGER AS day,
                    TIMESTAMP '2020-01-01' + to_seconds(i) AS ts
                  FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION {codec})
            """);

        using var reader = new NativeParquetReader(path);
        Assert.Equal(Rows, reader.RowCount);
        Assert.True(reader.RowGroupCount > 1, $"DuckDB wrote {reader.RowGroupCount} row group(s); the test needs several.");
        using HugeArray<long> id = reader.ReadColumn<long>("id");
        using NullableColumn<double> d = reader.ReadNullableColumn<double>("d");
        using HugeArray<int> n = reader.ReadColumn<int>("n");
        using NullableColumn<short> s = reader.ReadNullableColumn<short>("s");
        using HugeArray<bool> flag = reader.ReadColumn<bool>("flag");
        using HugeArray<byte> ub = reader.ReadColumn<byte>("ub");
        using HugeArray<float> f = reader.ReadColumn<float>("f");
        using HugeArray<uint> u = reader.ReadColumn<uint>("u");
        using HugeArray<ulong> ul = reader.ReadColumn<ulong>("ul");
        using NullableColumn<sbyte> t = reader.ReadNullableColumn<sbyte>("t");
        using HugeArray<int> day = reader.ReadColumn<int>("day");
        using HugeArray<long> ts = reader.ReadColumn<long>("ts");

        long checkedRows = duck.Query(
            $"""
            SELECT file_row_number, id, d, n, s, flag, ub, f, u, ul, t,
                   (day - DATE '1970-01-01')::INTEGER, epoch_us(ts)
            FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number
            """,
            row =>
            {
                long r = row.GetInt64(0);
                Assert.Equal(row.GetInt64(1), id[r]);
                CheckNullable(row, 2, d, r);
                Assert.Equal(row.GetInt32(3), n[r]);
                CheckNullable(row, 4, s, r);
                Assert.Equal(row.GetBoolean(5), flag[r]);
                Assert.Equal(row.GetFieldValue<byte>(6), ub[r]);
                Assert.Equal(row.GetFloat(7), f[r]);
                Assert.Equal(row.GetFieldValue<uint>(8), u[r]);
                Assert.Equal(row.GetFieldValue<ulong>(9), ul[r]);
                CheckNullable(row, 10, t, r);
                Assert.Equal(row.GetInt32(11), day[r]);
                Assert.Equal(row.GetInt64(12), ts[r]);
            });
        Assert.Equal(Rows, checkedRows);

        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FILTER (WHERE d IS NULL) FROM read_parquet('{path}')"), d.NullCount);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FILTER (WHERE s IS NULL) FROM read_parquet('{path}')"), s.NullCount);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FILTER (WHERE t IS NULL) FROM read_parquet('{path}')"), t.NullCount);
        Assert.True(d.NullCount > 0 && s.NullCount > 0 && t.NullCount > 0);
    }

    [Fact]
    public void A_column_with_nulls_read_as_not_nullable_throws_naming_the_first_null_row()
    {
        string path = _folder.File("nulls.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT CASE WHEN i = 777 THEN NULL ELSE i END::BIGINT AS v FROM range(1000) r(i)) TO '{path}' (FORMAT parquet)");
        using var reader = new NativeParquetReader(path);
        Assert.True(reader.IsNullable("v"));
        var error = Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("v"));
        Assert.Contains("row 777", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_optional_column_without_nulls_reads_as_not_nullable_and_as_nullable_with_every_bit_set()
    {
        string path = _folder.File("optional.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT i::INTEGER AS v FROM range(1003) r(i)) TO '{path}' (FORMAT parquet)");
        using var reader = new NativeParquetReader(path);
        using HugeArray<int> values = reader.ReadColumn<int>("v");
        using NullableColumn<int> nullable = reader.ReadNullableColumn<int>("v");
        Assert.Equal(0, nullable.NullCount);
        for (int i = 0; i < 1003; i++)
        {
            Assert.Equal(i, values[i]);
            Assert.Equal(i, nullable.Values[i]);
            Assert.False(nullable.IsNull(i));
        }
    }

    private static void CheckNullable<T>(DbDataReader row, int ordinal, NullableColumn<T> column, long r)
        where T : unmanaged, IEquatable<T>
    {
        if (row.IsDBNull(ordinal))
        {
            Assert.True(column.IsNull(r), $"row {r} is null in DuckDB");
            Assert.Equal(default, column.Values[r]);
        }
        else
        {
            Assert.False(column.IsNull(r), $"row {r} is not null in DuckDB");
            Assert.Equal(row.GetFieldValue<T>(ordinal), column.Values[r]);
        }
    }
}
