#pragma warning disable IDE0011, SA1107, SA1501, SA1503, IDE0022, CA2000
using System.Globalization;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Tests;

/// <summary>Hostile review 2: forged decimals and fixed-size binaries, values at the edges, files without rows.</summary>
public sealed unsafe class FlatTypeAttackTests : LedgerBalanced
{
    private static readonly Int128 Max38 = Int128.Parse("99999999999999999999999999999999999999", CultureInfo.InvariantCulture);
    private readonly TempFolder _folder = new();

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Fact]
    public void Attack_a_17_byte_decimal_of_2_pow_127_is_invalid_data_not_Int128_MinValue()
    {
        string path = _folder.File("w17.parquet");
        byte[] twoPow127 = new byte[17];
        twoPow127[1] = 0x80; // 0x00 0x80 00..: +2^127, one past Int128.MaxValue
        byte[] min = new byte[17];
        min[0] = 0xFF;
        min[1] = 0x80; // Int128.MinValue sign-extended
        WriteFixed(path, 17, 38, [min]);
        using (var reader = new NativeParquetReader(path))
        {
            // Int128.MinValue fits the 128 bits but has 39 digits, more than DECIMAL(38) holds: refused, not read.
            Assert.Contains("precision of 38", Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose()).Message, StringComparison.Ordinal);
        }

        WriteFixed(path, 17, 38, [twoPow127]);
        using (var reader = new NativeParquetReader(path))
        {
            Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose());
        }
    }

    [Fact]
    public void Attack_a_100_byte_decimal_reads_its_sign_extended_values_and_refuses_the_rest()
    {
        string path = _folder.File("w100.parquet");
        byte[] minusOne = Enumerable.Repeat((byte)0xFF, 100).ToArray();
        byte[] big = new byte[100];
        big[50] = 1;
        WriteFixed(path, 100, 38, [minusOne]);
        using (var reader = new NativeParquetReader(path))
        using (DecimalColumn column = reader.ReadDecimalColumn("d"))
        {
            Assert.Equal(Int128.NegativeOne, column.GetUnscaled(0));
        }

        WriteFixed(path, 100, 38, [minusOne, big]);
        using (var reader = new NativeParquetReader(path))
        {
            var e = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose());
            Assert.Contains("row 1", e.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Attack_a_40_byte_BYTE_ARRAY_decimal_past_128_bits_is_invalid_data()
    {
        string path = _folder.File("ba40.parquet");
        byte[] big = new byte[40];
        big[23] = 0x80; // +2^127 in 40 bytes
        WriteBytes(path, 38, 0, [new byte[] { 1 }, big]);
        using var reader = new NativeParquetReader(path);
        Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose());
    }

    [Fact]
    public void Attack_an_INT32_DECIMAL_4_holding_six_digits_is_refused_on_read_as_the_writer_refuses_it()
    {
        string path = _folder.File("int32-past.parquet");
        using (var schema = new GroupNode("schema", Repetition.Required, [new PrimitiveNode("d", Repetition.Required, LogicalType.Decimal(4, 0), PhysicalType.Int32)]))
        using (WriterProperties properties = new WriterPropertiesBuilder().Build())
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            using (RowGroupWriter group = file.AppendRowGroup())
            using (var writer = (ColumnWriter<int>)group.NextColumn())
            {
                writer.WriteBatch([123456, 7]);
            }

            file.Close();
        }

        using var reader = new NativeParquetReader(path);
        Exception? e = Record.Exception(() => reader.ReadDecimalColumn("d").Dispose());
        // DECIMAL(4, 0) cannot hold 123456: reading it as one is a silent wrong answer (and writing it back fails).
        Assert.IsType<InvalidDataException>(e);
    }

    [Fact]
    public void Attack_precision_38_scale_38_extremes_round_trip_and_Int128_MaxValue_is_refused()
    {
        string path = _folder.File("edges.parquet");
        using (var values = new HugeArray<Int128>(4))
        {
            values[0] = Max38;
            values[1] = -Max38;
            values[2] = 0;
            values[3] = -1;
            using var column = new DecimalColumn(values, null, 4, 38, 38);
            new NativeParquetWriter().Add("d", column).Write(path);
        }

        using (var reader = new NativeParquetReader(path))
        using (DecimalColumn read = reader.ReadDecimalColumn("d"))
        {
            Assert.Equal((38, 38), (read.Precision, read.Scale));
            Assert.Equal([Max38, -Max38, 0, -1], [read.GetUnscaled(0), read.GetUnscaled(1), read.GetUnscaled(2), read.GetUnscaled(3)]);
        }

        string bad = _folder.File("max.parquet");
        using (var values = new HugeArray<Int128>(2))
        {
            values[1] = Int128.MinValue;
            using var column = new DecimalColumn(values, null, 2, 38, 0);
            Assert.Throws<InvalidOperationException>(() => new NativeParquetWriter().Add("d", column).Write(bad));
            Assert.False(File.Exists(bad));
        }
    }

    [Fact]
    public void Attack_files_without_rows_give_empty_decimal_fixed_and_half_columns()
    {
        string path = _folder.File("empty.parquet");
        using (var schema = new GroupNode("schema", Repetition.Required,
        [
            new PrimitiveNode("d", Repetition.Optional, LogicalType.Decimal(20, 2), PhysicalType.FixedLenByteArray, 9),
            new PrimitiveNode("u", Repetition.Required, LogicalType.Uuid(), PhysicalType.FixedLenByteArray, 16),
            new PrimitiveNode("h", Repetition.Required, LogicalType.Float16(), PhysicalType.FixedLenByteArray, 2),
        ]))
        using (WriterProperties properties = new WriterPropertiesBuilder().Build())
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            file.Close();
        }

        using var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = false });
        Assert.Equal(9, reader.GetColumnInfo("d").TypeLength);
        using (DecimalColumn d = reader.ReadDecimalColumn("d"))
        {
            Assert.Equal(0, d.Length);
            Assert.Throws<ArgumentOutOfRangeException>(() => d.GetUnscaled(0));
        }

        using (FixedSizeBinaryColumn u = reader.ReadFixedSizeBinaryColumn("u"))
        {
            Assert.Equal((0L, 16), (u.Length, u.ByteWidth));
        }

        Exception? e = Record.Exception(() => reader.ReadColumn<Half>("h").Dispose());
        Assert.True(e is null or InvalidOperationException, e?.ToString());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Attack_a_damaged_decimal_or_fixed_binary_page_is_InvalidDataException_naming_the_column(bool verify)
    {
        string path = _folder.File("crc.parquet");
        using (var values = new HugeArray<Int128>(5000))
        using (var data = new HugeArray<byte>(5000 * 16))
        {
            for (int i = 0; i < 5000; i++) values[i] = (Int128)i * 1_000_003 * (i % 2 == 0 ? 1 : -1);
            for (int i = 0; i < 5000 * 16; i++) data[i] = (byte)(i * 31);
            using var column = new DecimalColumn(values, null, 5000, 30, 3);
            using var fixedColumn = new FixedSizeBinaryColumn(data, null, 5000, 16);
            new NativeParquetWriter { WritePageChecksums = true }.Add("d", column).Add("f", fixedColumn).Write(path);
        }

        byte[] bytes = File.ReadAllBytes(path);
        var wrong = new List<string>();
        int damaged = 0;
        for (int at = 200; at < bytes.Length - 2000; at += 4999)
        {
            byte[] copy = (byte[])bytes.Clone();
            copy[at] ^= 0x5A;
            string forged = _folder.File($"crc-{at}.parquet");
            File.WriteAllBytes(forged, copy);
            int caught = 0;
            foreach (string name in new[] { "d", "f" })
            {
                Exception? e = Record.Exception(() =>
                {
                    using var r = new NativeParquetReader(forged, new ParquetReadOptions { VerifyPageChecksums = verify });
                    if (name == "d") r.ReadDecimalColumn(name).Dispose(); else r.ReadFixedSizeBinaryColumn(name).Dispose();
                });
                bool ok = e is null || (e is InvalidDataException && e.Message.Contains($"'{name}'", StringComparison.Ordinal));
                if (!ok) wrong.Add($"byte {at}, column {name}: {e!.GetType().Name}: {e.Message}");
                if (e is not null) caught++;
            }

            if (verify && caught == 0) wrong.Add($"byte {at}: damaged, yet both columns read with checksums verified");

            damaged++;
        }

        Assert.True(damaged > 3);
        Assert.True(wrong.Count == 0, string.Join("\n", wrong));
    }

    private static void WriteFixed(string path, int width, int precision, byte[][] values)
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
            for (int i = 0; i < values.Length; i++) pointers[i] = new FixedLenByteArray((nint)(p + (i * width)));
            writer.WriteBatch(pointers);
        }

        file.Close();
    }

    private static void WriteBytes(string path, int precision, int scale, byte[][] values)
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
            for (int i = 0; i < values.Length; i++) { arrays[i] = new ByteArray((nint)(p + offset), values[i].Length); offset += values[i].Length; }
            writer.WriteBatch(arrays);
        }

        file.Close();
    }
}
