using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>DECIMAL, UUID, DATE, TIME and TIMESTAMP columns DuckDB wrote, read into native columns and checked value by value against DuckDB's own reading.</summary>
public sealed class FlatTypesWrittenByDuckDbTests : LedgerBalanced
{
    private const int Rows = 20_000;
    private readonly TempFolder _folder = new();

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Fact]
    public void Decimals_of_every_physical_width_match_DuckDBs_text_value_by_value()
    {
        string path = _folder.File("decimals.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT
                    CASE WHEN i % 7 = 0 THEN NULL ELSE ((i % 19999) - 9999) / 100 END::DECIMAL(4,2) AS small,
                    ((((i * 7919) % 2000000000 - 1000000000) * 997 + i % 1000) / 1000.0)::DECIMAL(18,3) AS medium,
                    CASE WHEN i % 5 = 0 THEN NULL
                         ELSE ((i::HUGEINT * 1234567890123456789 - 9876543210987654321)::VARCHAR || '.'
                               || lpad(((i * 7919) % 10000000000)::VARCHAR, 10, '0'))::DECIMAL(38,10) END AS large,
                    (CASE WHEN i = 1 THEN -9999999999999999999999999999.9999999999
                          WHEN i = 2 THEN 9999999999999999999999999999.9999999999
                          ELSE i END)::DECIMAL(38,10) AS edges
                  FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096)
            """);

        using var reader = new NativeParquetReader(path);
        Assert.True(reader.RowGroupCount > 1);
        (string Name, int Precision, int Scale, PhysicalType Physical)[] expected =
        [
            ("small", 4, 2, PhysicalType.Int32),
            ("medium", 18, 3, PhysicalType.Int64),
            ("large", 38, 10, PhysicalType.FixedLenByteArray),
            ("edges", 38, 10, PhysicalType.FixedLenByteArray),
        ];
        foreach ((string name, int precision, int scale, PhysicalType physical) in expected)
        {
            ParquetColumnInfo info = reader.GetColumnInfo(name);
            Assert.Equal(LogicalTypeEnum.Decimal, info.LogicalType);
            Assert.Equal(physical, info.PhysicalType);
            Assert.Equal(precision, info.Precision);
            Assert.Equal(scale, info.Scale);

            using DecimalColumn column = reader.ReadDecimalColumn(name);
            Assert.Equal(Rows, column.Length);
            Assert.Equal(precision, column.Precision);
            Assert.Equal(scale, column.Scale);
            long nulls = 0;
            long negatives = 0;
            long rows = duck.Query(
                $"SELECT file_row_number, {name}::VARCHAR FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
                row =>
                {
                    long at = row.GetInt64(0);
                    if (row.IsDBNull(1))
                    {
                        nulls++;
                        Assert.True(column.IsNull(at), $"{name} row {at}");
                        return;
                    }

                    string text = row.GetString(1);
                    negatives += text.StartsWith('-') ? 1 : 0;
                    Assert.False(column.IsNull(at), $"{name} row {at}");
                    Assert.Equal(text, column.ToString(at));
                });
            Assert.Equal(Rows, rows);
            Assert.Equal(nulls, column.NullCount);
            Assert.True(negatives > 0, $"{name} has no negative value to check");
            Assert.Equal(nulls == 0, column.Validity is null);
        }

        using DecimalColumn small = reader.ReadDecimalColumn("small");
        Assert.Equal(duck.Scalar<decimal>($"SELECT sum(small) FROM '{path}'"), SumOf(small));
        using DecimalColumn edges = reader.ReadDecimalColumn("edges");
        Assert.Equal("-9999999999999999999999999999.9999999999", edges.ToString(1));
        Assert.Throws<OverflowException>(() => edges.GetDecimal(1));
        Assert.Equal(3m, edges.GetDecimal(3));
    }

    [Fact]
    public void UUIDs_match_DuckDBs_text_value_by_value()
    {
        string path = _folder.File("uuids.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT CASE WHEN i % 9 = 4 THEN NULL ELSE md5(i::VARCHAR)::UUID END AS id FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096)
            """);

        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo info = reader.GetColumnInfo("id");
        Assert.Equal(PhysicalType.FixedLenByteArray, info.PhysicalType);
        Assert.Equal(LogicalTypeEnum.Uuid, info.LogicalType);
        Assert.Equal(16, info.TypeLength);
        Assert.True(info.IsNullable);
        using FixedSizeBinaryColumn column = reader.ReadFixedSizeBinaryColumn("id");
        Assert.Equal(16, column.ByteWidth);
        Assert.Equal(Rows, column.Length);
        long nulls = 0;
        duck.Query(
            $"SELECT file_row_number, id::VARCHAR FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            row =>
            {
                long at = row.GetInt64(0);
                if (row.IsDBNull(1))
                {
                    nulls++;
                    Assert.True(column.IsNull(at));
                    return;
                }

                Assert.False(column.IsNull(at));
                Assert.Equal(row.GetString(1), column.GetGuid(at).ToString());
            });
        Assert.Equal(nulls, column.NullCount);
        Assert.True(nulls > 0);
    }

    [Fact]
    public void Dates_times_and_timestamps_of_each_unit_are_described_and_read_as_DuckDB_reads_them()
    {
        string path = _folder.File("temporal.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT
                    DATE '1969-12-01' + (i % 20000)::INTEGER AS day,
                    TIME '00:00:00' + to_microseconds(i * 4321987) AS tm,
                    TIMESTAMP '1960-01-01' + to_microseconds(i * 86400123457) AS ts_us,
                    (TIMESTAMP '1960-01-01' + to_milliseconds(i * 86400123))::TIMESTAMP_MS AS ts_ms,
                    (TIMESTAMP '1960-01-01' + to_microseconds(i * 86400123457))::TIMESTAMP_NS AS ts_ns,
                    CASE WHEN i % 3 = 0 THEN NULL ELSE (TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_seconds(i)) END AS ts_tz
                  FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096)
            """);

        using var reader = new NativeParquetReader(path);
        Assert.Equal(LogicalTypeEnum.Date, reader.GetColumnInfo("day").LogicalType);
        ParquetColumnInfo time = reader.GetColumnInfo("tm");
        Assert.Equal((LogicalTypeEnum.Time, PhysicalType.Int64, TimeUnit.Micros), (time.LogicalType, time.PhysicalType, time.TimeUnit));
        ParquetColumnInfo us = reader.GetColumnInfo("ts_us");
        Assert.Equal((LogicalTypeEnum.Timestamp, TimeUnit.Micros, false), (us.LogicalType, us.TimeUnit, us.IsAdjustedToUtc));
        ParquetColumnInfo ms = reader.GetColumnInfo("ts_ms");
        Assert.Equal(LogicalTypeEnum.Timestamp, ms.LogicalType);
        ParquetColumnInfo ns = reader.GetColumnInfo("ts_ns");
        Assert.Equal((LogicalTypeEnum.Timestamp, TimeUnit.Nanos), (ns.LogicalType, ns.TimeUnit));
        ParquetColumnInfo tz = reader.GetColumnInfo("ts_tz");
        Assert.Equal((LogicalTypeEnum.Timestamp, TimeUnit.Micros, true, true), (tz.LogicalType, tz.TimeUnit, tz.IsAdjustedToUtc, tz.IsNullable));
        Assert.Contains("Timestamp", tz.LogicalTypeText, StringComparison.Ordinal);

        using HugeArray<int> day = reader.ReadColumn<int>("day");
        using HugeArray<long> tm = reader.ReadColumn<long>("tm");
        using HugeArray<long> tsUs = reader.ReadColumn<long>("ts_us");
        using HugeArray<long> tsMs = reader.ReadColumn<long>("ts_ms");
        using HugeArray<long> tsNs = reader.ReadColumn<long>("ts_ns");
        using NullableColumn<long> tsTz = reader.ReadNullableColumn<long>("ts_tz");
        // ts_ms's unit is whatever DuckDB chose to store: its description says which, and the values follow it.
        string msEpoch = ms.TimeUnit switch { TimeUnit.Millis => "epoch_ms", TimeUnit.Micros => "epoch_us", _ => "epoch_ns" };
        long rows = duck.Query(
            $"""
            SELECT file_row_number, (day - DATE '1970-01-01')::BIGINT, epoch_us(DATE '1970-01-01' + tm),
                   epoch_us(ts_us), {msEpoch}(ts_ms), epoch_ns(ts_ns), epoch_us(ts_tz)
            FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number
            """,
            row =>
            {
                long i = row.GetInt64(0);
                Assert.Equal(row.GetInt64(1), day[i]);
                Assert.Equal(row.GetInt64(2), tm[i]);
                Assert.Equal(row.GetInt64(3), tsUs[i]);
                Assert.Equal(row.GetInt64(4), tsMs[i]);
                Assert.Equal(row.GetInt64(5), tsNs[i]);
                Assert.Equal(row.IsDBNull(6), tsTz.IsNull(i));
                if (!row.IsDBNull(6))
                {
                    Assert.Equal(row.GetInt64(6), tsTz.Values[i]);
                }
            });
        Assert.Equal(Rows, rows);
        Assert.True(day[0] < 0, "a date before 1970 is a negative day count");
    }

    private static decimal SumOf(DecimalColumn column)
    {
        decimal sum = 0;
        for (long i = 0; i < column.Length; i++)
        {
            if (!column.IsNull(i))
            {
                sum += column.GetDecimal(i);
            }
        }

        return sum;
    }
}
