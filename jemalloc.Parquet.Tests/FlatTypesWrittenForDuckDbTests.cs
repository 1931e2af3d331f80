using System.Globalization;
using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>DECIMAL, UUID, fixed-size binary, FLOAT16, DATE and TIMESTAMP columns written from native columns: DuckDB reads the right types and values, and so does the reader.</summary>
public sealed class FlatTypesWrittenForDuckDbTests : LedgerBalanced
{
    private const int Rows = 10_000;
    private readonly TempFolder _folder = new();

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Theory]
    [InlineData(4, 2, PhysicalType.Int32)]
    [InlineData(9, 0, PhysicalType.Int32)]
    [InlineData(10, 5, PhysicalType.Int64)]
    [InlineData(18, 3, PhysicalType.Int64)]
    [InlineData(19, 4, PhysicalType.FixedLenByteArray)]
    [InlineData(38, 10, PhysicalType.FixedLenByteArray)]
    [InlineData(38, 38, PhysicalType.FixedLenByteArray)]
    public void Decimals_reach_DuckDB_with_their_precision_scale_and_every_value(int precision, int scale, PhysicalType physical)
    {
        string path = _folder.File($"decimal-{precision}-{scale}.parquet");
        Int128 limit = Int128.Parse("1".PadRight(precision + 1, '0'), CultureInfo.InvariantCulture);
        using DecimalColumn column = MakeDecimals(Rows, precision, scale, limit, nullEvery: 6);
        new NativeParquetWriter { RowGroupSize = 3000 }.Add("d", column).Write(path);

        using var duck = new DuckDb();
        Assert.Equal($"DECIMAL({precision},{scale})", duck.Scalar<string>($"SELECT typeof(d) FROM '{path}' LIMIT 1"));
        Assert.Equal(column.NullCount, duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE d IS NULL"));
        long rows = duck.Query(
            $"SELECT file_row_number, d::VARCHAR FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            row =>
            {
                long at = row.GetInt64(0);
                Assert.Equal(column.IsNull(at), row.IsDBNull(1));
                if (!row.IsDBNull(1))
                {
                    Assert.Equal(column.ToString(at), WithLeadingZero(row.GetString(1)));
                }
            });
        Assert.Equal(Rows, rows);

        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo info = reader.GetColumnInfo("d");
        Assert.Equal(physical, info.PhysicalType);
        Assert.Equal((precision, scale), (info.Precision, info.Scale));
        using DecimalColumn back = reader.ReadDecimalColumn("d");
        AssertSameDecimals(column, back);
    }

    [Fact]
    public void A_decimal_column_without_nulls_is_required_and_reads_back_without_a_bitmap()
    {
        string path = _folder.File("required.parquet");
        using DecimalColumn column = MakeDecimals(1000, 12, 4, Int128.Parse("1000000000000", CultureInfo.InvariantCulture), nullEvery: 0);
        new NativeParquetWriter().Add("d", column).Write(path);
        using var reader = new NativeParquetReader(path);
        Assert.False(reader.GetColumnInfo("d").IsNullable);
        using DecimalColumn back = reader.ReadDecimalColumn("d");
        Assert.Null(back.Validity);
        AssertSameDecimals(column, back);
        using var duck = new DuckDb();
        Assert.Equal(SumText(column), duck.Scalar<string>($"SELECT sum(d)::VARCHAR FROM '{path}'"));
    }

    [Fact]
    public void UUIDs_and_plain_fixed_size_binary_reach_DuckDB_as_UUID_and_BLOB()
    {
        string path = _folder.File("binary.parquet");
        var guids = new Guid[Rows];
        var uuidData = new HugeArray<byte>(Rows * 16L);
        var threeData = new HugeArray<byte>(Rows * 3L);
        var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int i = 0; i < Rows; i++)
        {
            guids[i] = new Guid(i * 7919, (short)i, (short)(i >> 3), 1, 2, 3, 4, 5, 6, (byte)i, (byte)(i >> 8));
            uuidData.CopyFrom(guids[i].ToByteArray(bigEndian: true), i * 16L);
            threeData.CopyFrom(new[] { (byte)i, (byte)(i >> 8), (byte)0xAB }, i * 3L);
            if (i % 11 == 3)
            {
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        using var uuids = new FixedSizeBinaryColumn(uuidData, validity, Rows, 16);
        using var three = new FixedSizeBinaryColumn(threeData, null, Rows, 3);
        new NativeParquetWriter().AddUuid("u", uuids).Add("b", three).Write(path);

        using var duck = new DuckDb();
        Assert.Equal("UUID", duck.Scalar<string>($"SELECT typeof(u) FROM '{path}' LIMIT 1"));
        Assert.Equal("BLOB", duck.Scalar<string>($"SELECT typeof(b) FROM '{path}' LIMIT 1"));
        duck.Query(
            $"SELECT file_row_number, u::VARCHAR, hex(b) FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            row =>
            {
                int at = (int)row.GetInt64(0);
                Assert.Equal(uuids.IsNull(at), row.IsDBNull(1));
                if (!row.IsDBNull(1))
                {
                    Assert.Equal(guids[at].ToString(), row.GetString(1));
                }

                Assert.Equal($"{(byte)at:X2}{(byte)(at >> 8):X2}AB", row.GetString(2));
            });

        using var reader = new NativeParquetReader(path);
        Assert.Equal(LogicalTypeEnum.Uuid, reader.GetColumnInfo("u").LogicalType);
        Assert.Equal(3, reader.GetColumnInfo("b").TypeLength);
        using FixedSizeBinaryColumn u = reader.ReadFixedSizeBinaryColumn("u");
        using FixedSizeBinaryColumn b = reader.ReadFixedSizeBinaryColumn("b");
        Assert.Equal(uuids.NullCount, u.NullCount);
        Span<byte> value = stackalloc byte[3];
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(uuids.IsNull(i), u.IsNull(i));
            Assert.Equal(uuids.IsNull(i) ? Guid.Empty : guids[i], u.GetGuid(i));
            three.CopyValue(i, value);
            Assert.True(b.ValueEquals(i, value));
        }
    }

    [Fact]
    public void Half_columns_are_FLOAT16_that_DuckDB_reads_and_the_reader_reads_back_as_Half()
    {
        string path = _folder.File("half.parquet");
        using var values = new HugeArray<Half>(Rows);
        using var nullable = new HugeArray<Half>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = (Half)((i % 2000) * 0.25 - 250);
            nullable[i] = (Half)(i % 100);
            if (i % 4 == 1)
            {
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        new NativeParquetWriter { RowGroupSize = 4096 }.Add("h", values).Add("n", nullable, validity).Write(path);

        using var duck = new DuckDb();
        duck.Query(
            $"SELECT file_row_number, h::DOUBLE, n::DOUBLE FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            row =>
            {
                int at = (int)row.GetInt64(0);
                Assert.Equal((double)values[at], row.GetDouble(1));
                Assert.Equal(at % 4 == 1, row.IsDBNull(2));
                if (!row.IsDBNull(2))
                {
                    Assert.Equal((double)nullable[at], row.GetDouble(2));
                }
            });

        using var reader = new NativeParquetReader(path);
        Assert.Equal(LogicalTypeEnum.Float16, reader.GetColumnInfo("h").LogicalType);
        using HugeArray<Half> h = reader.ReadColumn<Half>("h");
        using NullableColumn<Half> n = reader.ReadNullableColumn<Half>("n");
        Assert.Equal(Rows / 4, n.NullCount);
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(values[i], h[i]);
            Assert.Equal(i % 4 == 1, n.IsNull(i));
            Assert.Equal(i % 4 == 1 ? Half.Zero : nullable[i], n.Values[i]);
        }

        var error = Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<Half>("n"));
        Assert.Contains("row 1", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void FLOAT16_written_by_ParquetSharps_own_logical_writer_reads_as_the_same_Half_values()
    {
        string path = _folder.File("half-parquetsharp.parquet");
        var expected = new Half?[Rows];
        for (int i = 0; i < Rows; i++)
        {
            expected[i] = i % 5 == 2 ? null : (Half)((i % 4000) * 0.125 - 100);
        }

        expected[7] = Half.MaxValue;
        expected[8] = Half.Epsilon;
        expected[9] = Half.NegativeInfinity;
        using (var file = new ParquetFileWriter(path, [new Column<Half?>("h")]))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using LogicalColumnWriter<Half?> writer = group.NextColumn().LogicalWriter<Half?>();
            writer.WriteBatch(expected);
            file.Close();
        }

        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo info = reader.GetColumnInfo("h");
        Assert.Equal((PhysicalType.FixedLenByteArray, LogicalTypeEnum.Float16, 2), (info.PhysicalType, info.LogicalType, info.TypeLength));
        using NullableColumn<Half> column = reader.ReadNullableColumn<Half>("h");
        Assert.Equal(expected.Count(v => v is null), column.NullCount);
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(expected[i] is null, column.IsNull(i));
            Assert.Equal(expected[i] ?? Half.Zero, column.Values[i]);
        }
    }

    [Fact]
    public void Dates_and_timestamps_of_each_unit_reach_DuckDB_as_their_types()
    {
        string path = _folder.File("temporal.parquet");
        using var days = new HugeArray<int>(Rows);
        using var dayValidity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        using var millis = new HugeArray<long>(Rows);
        using var micros = new HugeArray<long>(Rows);
        using var nanos = new HugeArray<long>(Rows);
        for (int i = 0; i < Rows; i++)
        {
            days[i] = i * 3 - 5000;
            millis[i] = i * 86_400_123L - 100_000_000L;
            micros[i] = i * 86_400_123_457L;
            nanos[i] = i * 86_400_123_456_789L - 1;
            if (i % 10 == 0)
            {
                dayValidity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        new NativeParquetWriter()
            .AddDate("day", days, dayValidity)
            .AddTimestamp("ms", millis, TimeUnit.Millis, isAdjustedToUtc: false)
            .AddTimestamp("us", micros, TimeUnit.Micros)
            .AddTimestamp("ns", nanos, TimeUnit.Nanos, isAdjustedToUtc: false)
            .Write(path);

        using var duck = new DuckDb();
        // DuckDB keeps milliseconds of local time as its TIMESTAMP (microseconds); the values are the same instants.
        Assert.Equal(
            "DATE|TIMESTAMP|TIMESTAMP WITH TIME ZONE|TIMESTAMP_NS",
            duck.Scalar<string>($"SELECT typeof(day) || '|' || typeof(ms) || '|' || typeof(us) || '|' || typeof(ns) FROM '{path}' LIMIT 1"));
        duck.Query(
            $"""
            SELECT file_row_number, (day - DATE '1970-01-01')::BIGINT, epoch_ms(ms), epoch_us(us), epoch_ns(ns)
            FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number
            """,
            row =>
            {
                int at = (int)row.GetInt64(0);
                Assert.Equal(at % 10 == 0, row.IsDBNull(1));
                if (!row.IsDBNull(1))
                {
                    Assert.Equal(days[at], row.GetInt64(1));
                }

                Assert.Equal(millis[at], row.GetInt64(2));
                Assert.Equal(micros[at], row.GetInt64(3));
                Assert.Equal(nanos[at], row.GetInt64(4));
            });

        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo ns = reader.GetColumnInfo("ns");
        Assert.Equal((LogicalTypeEnum.Timestamp, TimeUnit.Nanos, false), (ns.LogicalType, ns.TimeUnit, ns.IsAdjustedToUtc));
        ParquetColumnInfo us = reader.GetColumnInfo("us");
        Assert.Equal((TimeUnit.Micros, true), (us.TimeUnit, us.IsAdjustedToUtc));
        Assert.Equal(LogicalTypeEnum.Date, reader.GetColumnInfo("day").LogicalType);
        using HugeArray<long> back = reader.ReadColumn<long>("ms");
        Assert.Equal(millis[Rows - 1], back[Rows - 1]);
    }

    [Fact]
    public void A_column_of_the_Null_type_reads_as_every_row_null_and_DuckDB_agrees()
    {
        string path = _folder.File("null-type.parquet");
        using (var schema = new ParquetSharp.Schema.GroupNode("schema", Repetition.Required, [
            new ParquetSharp.Schema.PrimitiveNode("nothing", Repetition.Optional, LogicalType.Null(), PhysicalType.Int32),
            new ParquetSharp.Schema.PrimitiveNode("id", Repetition.Required, LogicalType.None(), PhysicalType.Int64)]))
        using (var properties = new WriterPropertiesBuilder().Build())
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using (var nothing = (ColumnWriter<int>)group.NextColumn())
            {
                nothing.WriteBatch(5, new short[5], null, ReadOnlySpan<int>.Empty);
            }

            using (var id = (ColumnWriter<long>)group.NextColumn())
            {
                id.WriteBatch([1, 2, 3, 4, 5]);
            }

            file.Close();
        }

        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo info = reader.GetColumnInfo("nothing");
        Assert.Equal(LogicalTypeEnum.Nil, info.LogicalType);
        using NullableColumn<int> column = reader.ReadNullableColumn<int>("nothing");
        Assert.Equal(5, column.NullCount);
        Assert.True(column.IsNull(4));
        Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<int>("nothing"));
        Assert.Throws<ArgumentException>(() => reader.ReadNullableColumn<long>("nothing"));
        using var duck = new DuckDb();
        Assert.Equal(5, duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE nothing IS NULL"));
    }

    [Fact]
    public void An_INT96_column_still_reads_as_Int96_and_is_described_as_such()
    {
        string path = _folder.File("int96.parquet");
        using var values = new HugeArray<Int96>(3);
        values[1] = new Int96(1, 2, 3);
        new NativeParquetWriter().Add("t", values).Write(path);
        using var reader = new NativeParquetReader(path);
        Assert.Equal(PhysicalType.Int96, reader.GetColumnInfo("t").PhysicalType);
        using HugeArray<Int96> back = reader.ReadColumn<Int96>("t");
        Assert.Equal(new Int96(1, 2, 3), back[1]);
    }

    [Fact]
    public void Columns_of_no_rows_write_and_read_as_Length_0()
    {
        string path = _folder.File("empty.parquet");
        using var decimals = new DecimalColumn(new HugeArray<Int128>(1), null, 0, 20, 2);
        using var binary = new FixedSizeBinaryColumn(new HugeArray<byte>(4), new HugeArray<byte>(1), 0, 4);
        new NativeParquetWriter().Add("d", decimals).Add("b", binary).Write(path);
        using var reader = new NativeParquetReader(path);
        Assert.Equal(0, reader.RowCount);
        using DecimalColumn d = reader.ReadDecimalColumn("d");
        using FixedSizeBinaryColumn b = reader.ReadFixedSizeBinaryColumn("b");
        Assert.Equal((0L, 20, 2), (d.Length, d.Precision, d.Scale));
        Assert.Equal((0L, 4), (b.Length, b.ByteWidth));
        using var duck = new DuckDb();
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM '{path}'"));
    }

    internal static DecimalColumn MakeDecimals(long rows, int precision, int scale, Int128 limit, int nullEvery)
    {
        var values = new HugeArray<Int128>(rows);
        HugeArray<byte>? validity = nullEvery > 0 ? new HugeArray<byte>((rows + 7) / 8, (byte)0xFF) : null;
        var step = Int128.Max(1, limit / 7919);
        for (long i = 0; i < rows; i++)
        {
            // Spread over the whole range, both signs, with the extremes at rows 1 and 2.
            Int128 value = i switch
            {
                1 => limit - 1,
                2 => -(limit - 1),
                _ => (i * 7919 % 15838 - 7919) * step % limit,
            };
            values[i] = value;
            if (validity is not null && i % nullEvery == 5)
            {
                validity[i >> 3] &= (byte)~(1 << (int)(i & 7));
            }
        }

        return new DecimalColumn(values, validity, rows, precision, scale);
    }

    internal static void AssertSameDecimals(DecimalColumn expected, DecimalColumn actual)
    {
        Assert.Equal(expected.Length, actual.Length);
        Assert.Equal((expected.Precision, expected.Scale, expected.NullCount), (actual.Precision, actual.Scale, actual.NullCount));
        for (long i = 0; i < expected.Length; i++)
        {
            Assert.Equal(expected.IsNull(i), actual.IsNull(i));
            Assert.Equal(expected.IsNull(i) ? Int128.Zero : expected.GetUnscaled(i), actual.GetUnscaled(i));
        }
    }

    // DuckDB writes a DECIMAL(p, p) below one without its zero (".5"); ToString writes "0.5".
    private static string WithLeadingZero(string text) =>
        text.StartsWith('.') ? "0" + text : text.StartsWith("-.", StringComparison.Ordinal) ? "-0" + text[1..] : text;

    private static string SumText(DecimalColumn column)
    {
        Int128 sum = 0;
        for (long i = 0; i < column.Length; i++)
        {
            sum += column.GetUnscaled(i);
        }

        using var total = new DecimalColumn(new HugeArray<Int128>(1, sum), null, 1, 38, column.Scale);
        return total.ToString(0);
    }
}
