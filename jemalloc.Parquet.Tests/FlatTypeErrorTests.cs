using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Tests;

/// <summary>The flat types' failure paths: the wrong read, values a decimal128 cannot hold, malformed decimals, a value past its precision, disposed columns. Each leaves the ledger as it found it.</summary>
public sealed unsafe class FlatTypeErrorTests : LedgerBalanced
{
    private readonly TempFolder _folder = new();

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Fact]
    public void Asking_a_column_for_the_wrong_type_throws_ArgumentException_naming_the_column_and_its_types()
    {
        string path = _folder.File("mixed.parquet");
        using (var plain = new HugeArray<long>(10, 7L))
        using (DecimalColumn money = FlatTypesWrittenForDuckDbTests.MakeDecimals(10, 12, 2, 1_000_000_000_000, nullEvery: 0))
        using (var uuid = new FixedSizeBinaryColumn(new HugeArray<byte>(160), null, 10, 16))
        {
            new NativeParquetWriter().Add("plain", plain).Add("money", money).AddUuid("uuid", uuid).Write(path);
        }

        using var reader = new NativeParquetReader(path);
        var error = Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("plain"));
        Assert.Contains("'plain'", error.Message, StringComparison.Ordinal);
        Assert.Contains("Int64", error.Message, StringComparison.Ordinal);
        error = Assert.Throws<ArgumentException>(() => reader.ReadFixedSizeBinaryColumn("money"));
        Assert.Contains("'money'", error.Message, StringComparison.Ordinal);
        Assert.Contains("Int64", error.Message, StringComparison.Ordinal);
        error = Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("money"));
        Assert.Contains("Decimal", error.Message, StringComparison.Ordinal);
        error = Assert.Throws<ArgumentException>(() => reader.ReadColumn<Half>("uuid"));
        Assert.Contains("UUID", error.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("uuid"));
        Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("missing"));
        Assert.Throws<NotSupportedException>(() => reader.ReadColumn<Int128>("money"));
        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadDecimalColumn("money"));
        Assert.Throws<ObjectDisposedException>(() => reader.ReadFixedSizeBinaryColumn("uuid"));
        Assert.Throws<ObjectDisposedException>(() => reader.GetColumnInfo("money"));
    }

    [Fact]
    public void A_FIXED_LEN_BYTE_ARRAY_decimal_wider_than_16_bytes_reads_while_its_values_fit_and_throws_naming_the_row_when_one_does_not()
    {
        string fits = _folder.File("wide-fits.parquet");
        byte[] minusFive = Wide(20, -5);
        Int128 largestValue = Int128.Parse("99999999999999999999999999999999999999", System.Globalization.CultureInfo.InvariantCulture); // 38 digits
        byte[] largest = Wide(20, largestValue);
        WriteFixedDecimal(fits, 20, 38, [minusFive, largest, Wide(20, 12345)]);
        using (var reader = new NativeParquetReader(fits))
        using (DecimalColumn column = reader.ReadDecimalColumn("d"))
        {
            Assert.Equal([(Int128)(-5), largestValue, 12345], [column.GetUnscaled(0), column.GetUnscaled(1), column.GetUnscaled(2)]);
        }

        string tooWide = _folder.File("wide-too-wide.parquet");
        byte[] past = Wide(20, 1);
        past[3] = 1; // 2^128 + 1: more than 128 bits
        byte[] signFlip = Wide(20, 0);
        signFlip[4] = 0x80; // 2^127: positive, but the low 16 bytes alone would read negative
        WriteFixedDecimal(tooWide, 20, 38, [minusFive, past, signFlip]);
        using (var reader = new NativeParquetReader(tooWide))
        {
            var error = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d"));
            Assert.Contains("'d'", error.Message, StringComparison.Ordinal);
            Assert.Contains("row 1", error.Message, StringComparison.Ordinal);
        }

        WriteFixedDecimal(tooWide, 20, 38, [minusFive, minusFive, signFlip]);
        using (var reader = new NativeParquetReader(tooWide))
        {
            Assert.Contains("row 2", Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d")).Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void A_decimal_of_more_than_38_digits_throws_NotSupportedException_naming_the_column()
    {
        string path = _folder.File("decimal256.parquet");
        WriteFixedDecimal(path, 32, 70, [Wide(32, 1)]);
        using var reader = new NativeParquetReader(path);
        Assert.Equal(70, reader.GetColumnInfo("d").Precision);
        var error = Assert.Throws<NotSupportedException>(() => reader.ReadDecimalColumn("d"));
        Assert.Contains("'d'", error.Message, StringComparison.Ordinal);
        Assert.Contains("70", error.Message, StringComparison.Ordinal);
        using FixedSizeBinaryColumn raw = reader.ReadFixedSizeBinaryColumn("d");
        Assert.Equal(32, raw.ByteWidth);
    }

    [Fact]
    public void BYTE_ARRAY_decimals_of_any_length_read_as_DuckDB_reads_them_and_an_empty_one_throws()
    {
        string path = _folder.File("byte-array-decimal.parquet");
        byte[][] values =
        [
            [0x01], [0xFF], [0x00, 0x80], [0x80], [0xFF, 0x7F], Wide(17, -123456789), Wide(16, -NinesOf38), [0x12, 0x34, 0x56],
            Wide(8, long.MinValue), Wide(9, (Int128)long.MinValue - 1), Wide(12, -(Int128.One << 90)), Wide(15, (Int128.One << 119) - 1),
        ];
        WriteByteArrayDecimal(path, 38, 3, values);
        using (var reader = new NativeParquetReader(path))
        using (DecimalColumn column = reader.ReadDecimalColumn("d"))
        {
            Assert.Equal(PhysicalType.ByteArray, reader.GetColumnInfo("d").PhysicalType);
            Int128[] expected =
            [
                1, -1, 128, -128, -129, -123456789, -NinesOf38, 0x123456,
                long.MinValue, (Int128)long.MinValue - 1, -(Int128.One << 90), (Int128.One << 119) - 1,
            ];
            for (int i = 0; i < expected.Length; i++)
            {
                Assert.Equal(expected[i], column.GetUnscaled(i));
            }

            using var duck = new DuckDb();
            duck.Query(
                $"SELECT file_row_number, d::VARCHAR FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
                row => Assert.Equal(row.GetString(1), column.ToString(row.GetInt64(0))));
        }

        WriteByteArrayDecimal(path, 10, 0, [[0x01], [], [0x02]]);
        using (var reader = new NativeParquetReader(path))
        {
            var error = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d"));
            Assert.Contains("row 1", error.Message, StringComparison.Ordinal);
        }
    }

    // The largest unscaled value of DECIMAL(38, s): 38 nines.
    private static readonly Int128 NinesOf38 = Int128.Parse("99999999999999999999999999999999999999", System.Globalization.CultureInfo.InvariantCulture);

    [Fact]
    public void A_stored_value_with_more_digits_than_the_precision_is_refused_naming_the_row()
    {
        string path = _folder.File("past-precision-read.parquet");
        WriteByteArrayDecimal(path, 4, 0, [[0x01], Wide(4, 123456)]);
        using var reader = new NativeParquetReader(path);
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d"));
        Assert.Contains("row 1", error.Message, StringComparison.Ordinal);
        Assert.Contains("precision of 4", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_value_past_the_columns_precision_fails_the_write_naming_the_column_and_row_and_leaves_no_file()
    {
        string path = _folder.File("past-precision.parquet");
        using var values = new HugeArray<Int128>(100, 5);
        values[70] = 100_000; // six digits in a DECIMAL(5, 2)
        using var validity = new HugeArray<byte>(13, (byte)0xFF);
        using (var column = new DecimalColumn(values, null, 100, 5, 2))
        {
            var error = Assert.Throws<InvalidOperationException>(() => new NativeParquetWriter().Add("price", column).Write(path));
            Assert.Contains("'price'", error.Message, StringComparison.Ordinal);
            Assert.Contains("row 70", error.Message, StringComparison.Ordinal);
            Assert.Contains("1000.00", error.Message, StringComparison.Ordinal);
            Assert.False(File.Exists(path));
        }
    }

    [Fact]
    public void A_null_rows_value_is_not_checked_against_the_precision_and_is_not_written()
    {
        string path = _folder.File("null-past-precision.parquet");
        var values = new HugeArray<Int128>(16, 5);
        values[3] = Int128.MaxValue;
        var validity = new HugeArray<byte>(2, (byte)0xFF);
        validity[0] = 0b1111_0111;
        using var column = new DecimalColumn(values, validity, 16, 5, 2);
        new NativeParquetWriter().Add("d", column).Write(path);
        using var reader = new NativeParquetReader(path);
        using DecimalColumn back = reader.ReadDecimalColumn("d");
        Assert.True(back.IsNull(3));
        Assert.Equal(Int128.Zero, back.GetUnscaled(3));
        Assert.Equal((Int128)5, back.GetUnscaled(4));
    }

    [Fact]
    public void Writer_misuse_throws_before_anything_is_written()
    {
        string path = _folder.File("misuse.parquet");
        var eight = new FixedSizeBinaryColumn(new HugeArray<byte>(16), null, 2, 8);
        var writer = new NativeParquetWriter();
        var error = Assert.Throws<ArgumentException>(() => writer.AddUuid("id", eight));
        Assert.Contains("16", error.Message, StringComparison.Ordinal);
        using (var times = new HugeArray<long>(2))
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => writer.AddTimestamp("t", times, TimeUnit.Unknown));
        }

        eight.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Add("id", eight));
        var decimals = new DecimalColumn(new HugeArray<Int128>(2), null, 2, 5, 0);
        decimals.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Add("d", decimals));
        Assert.Throws<ArgumentNullException>(() => writer.Add("d", (DecimalColumn)null!));
        Assert.Equal(0, writer.ColumnCount);
    }

    [Fact]
    public void A_column_disposed_between_Add_and_Write_fails_the_write_with_ObjectDisposedException()
    {
        string path = _folder.File("disposed.parquet");
        var column = new DecimalColumn(new HugeArray<Int128>(4), null, 4, 5, 0);
        var writer = new NativeParquetWriter().Add("d", column);
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void A_FLOAT16_column_of_another_width_throws_InvalidDataException()
    {
        string path = _folder.File("bad-half.parquet");
        using (var schema = new GroupNode("schema", Repetition.Required, [new PrimitiveNode("h", Repetition.Required, LogicalType.None(), PhysicalType.FixedLenByteArray, 4)]))
        using (var properties = new WriterPropertiesBuilder().Build())
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using var writer = (ColumnWriter<FixedLenByteArray>)group.NextColumn();
            byte[] bytes = [1, 2, 3, 4];
            fixed (byte* p = bytes)
            {
                writer.WriteBatch([new FixedLenByteArray((nint)p)]);
            }

            file.Close();
        }

        // Not FLOAT16 at all: a Half is not read from plain bytes.
        using var reader = new NativeParquetReader(path);
        Assert.Throws<ArgumentException>(() => reader.ReadColumn<Half>("h"));
    }

    private static byte[] Wide(int width, Int128 value)
    {
        var bytes = new byte[width];
        for (int i = width - 1; i >= 0; i--)
        {
            bytes[i] = (byte)value;
            value >>= 8;
        }

        return bytes;
    }

    private static void WriteFixedDecimal(string path, int width, int precision, byte[][] values)
    {
        using var schema = new GroupNode("schema", Repetition.Required, [new PrimitiveNode("d", Repetition.Required, LogicalType.Decimal(precision, 0), PhysicalType.FixedLenByteArray, width)]);
        using WriterProperties properties = new WriterPropertiesBuilder().Build();
        using var file = new ParquetFileWriter(path, schema, properties);
        using RowGroupWriter group = file.AppendRowGroup();
        using var writer = (ColumnWriter<FixedLenByteArray>)group.NextColumn();
        byte[] all = values.SelectMany(v => v).ToArray();
        fixed (byte* p = all)
        {
            var pointers = new FixedLenByteArray[values.Length];
            for (int i = 0; i < values.Length; i++)
            {
                pointers[i] = new FixedLenByteArray((nint)(p + (i * width)));
            }

            writer.WriteBatch(pointers);
        }

        file.Close();
    }

    private static void WriteByteArrayDecimal(string path, int precision, int scale, byte[][] values)
    {
        using var schema = new GroupNode("schema", Repetition.Required, [new PrimitiveNode("d", Repetition.Required, LogicalType.Decimal(precision, scale), PhysicalType.ByteArray)]);
        using WriterProperties properties = new WriterPropertiesBuilder().Build();
        using var file = new ParquetFileWriter(path, schema, properties);
        using RowGroupWriter group = file.AppendRowGroup();
        using var writer = (ColumnWriter<ByteArray>)group.NextColumn();
        byte[] all = [.. values.SelectMany(v => v), 0];
        fixed (byte* p = all)
        {
            var arrays = new ByteArray[values.Length];
            int offset = 0;
            for (int i = 0; i < values.Length; i++)
            {
                arrays[i] = new ByteArray((nint)(p + offset), values[i].Length);
                offset += values[i].Length;
            }

            writer.WriteBatch(arrays);
        }

        file.Close();
    }
}
