using System.Buffers.Binary;
using System.Globalization;
using Apache.Arrow;
using Apache.Arrow.Arrays;
using Apache.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Decimal128 and FixedSizeBinary columns through <see cref="ArrowIpcReader"/> and <see cref="ArrowIpcWriter"/>:
/// IPC that Apache Arrow for JavaScript wrote (several precisions and scales, negatives, nulls, batches of
/// odd lengths) read value by value; IPC written from native columns read by Node and by Apache Arrow for
/// .NET; big-endian IPC; and forged widths, precisions and buffers refused with the ledger back where it was.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcDecimalTests : IDisposable
{
    private static readonly Int128 Max38 = Int128.Parse("99999999999999999999999999999999999999", CultureInfo.InvariantCulture);
    private static readonly Int128 Pow33 = Int128.Parse("1000000000000000000000000000000000", CultureInfo.InvariantCulture);

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-decimal-" + Guid.NewGuid().ToString("N"));

    public IpcDecimalTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public void Decimals_and_fixed_size_binary_Node_wrote_read_value_by_value(string format)
    {
        string path = Path.Combine(_folder, $"decimals.{format}.arrow");
        NodeArrow.Run("write-decimals", path, format, IpcExpected.BatchLengths);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(path))
        {
            Assert.Equal(6, reader.BatchCount);
            Assert.Equal(
                ["dec1: Decimal(1, 0, 128), nullable", "dec9: Decimal(9, 2, 128), nullable", "dec18: Decimal(18, 6, 128), nullable", "dec38: Decimal(38, 10, 128), nullable",
                 "fsb16: FixedSizeBinary(16), nullable", "fsb3: FixedSizeBinary(3), nullable", "d256: Decimal(40, 2, 256), nullable"],
                reader.Fields.Select(f => f.ToString()));
            Assert.Equal(
                [ArrowIpcType.Decimal128, ArrowIpcType.Decimal128, ArrowIpcType.Decimal128, ArrowIpcType.Decimal128, ArrowIpcType.FixedSizeBinary, ArrowIpcType.FixedSizeBinary, ArrowIpcType.Other],
                reader.Fields.Select(f => f.Type));
            Assert.Equal<(int?, int?, int?)>((38, 10, null), (reader.Fields[3].Precision, reader.Fields[3].Scale, reader.Fields[3].ByteWidth));
            Assert.Equal<(int?, int?, int?)>((null, null, 16), (reader.Fields[4].Precision, reader.Fields[4].Scale, reader.Fields[4].ByteWidth));
            Assert.Equal<(int?, int?)>((40, 2), (reader.Fields[6].Precision, reader.Fields[6].Scale));

            CheckDecimals(reader, "dec1", 1, 0, Dec1, NullEvery5);
            CheckDecimals(reader, "dec9", 9, 2, Dec9, null);
            CheckDecimals(reader, "dec18", 18, 6, Dec18, r => r % 7 == 3);
            CheckDecimals(reader, "dec38", 38, 10, Dec38, r => r % 11 == 5);
            CheckBinary(reader, "fsb16", 16, Fsb16, r => r % 6 == 1);
            CheckBinary(reader, "fsb3", 3, Fsb3, null);

            NotSupportedException wide = Assert.Throws<NotSupportedException>(() => reader.ReadDecimalColumn("d256"));
            Assert.Contains("'d256' is Decimal(40, 2, 256), a decimal of 256 bits", wide.Message, StringComparison.Ordinal);
            Assert.Contains("'d256' is of type Decimal(40, 2, 256), a type the reader does not read", Assert.Throws<NotSupportedException>(() => reader.ReadFixedSizeBinaryColumn("d256")).Message, StringComparison.Ordinal);

            // A column another read takes, read with the wrong one: the caller's mistake, as in the Parquet reader.
            ArgumentException notDecimal = Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("fsb16"));
            Assert.Equal("column", notDecimal.ParamName);
            Assert.Contains("'fsb16' is of type FixedSizeBinary(16), which ReadDecimalColumn does not read: read it with ReadFixedSizeBinaryColumn", notDecimal.Message, StringComparison.Ordinal);
            ArgumentException notBinary = Assert.Throws<ArgumentException>(() => reader.ReadFixedSizeBinaryColumn("dec9"));
            Assert.Contains("'dec9' is of type Decimal(9, 2, 128), which ReadFixedSizeBinaryColumn does not read: read it with ReadDecimalColumn", notBinary.Message, StringComparison.Ordinal);
            Assert.Contains("read it with ReadDecimalColumn", Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("dec18", AllocationOptions.Default, out _)).Message, StringComparison.Ordinal);
            Assert.Contains("read it with ReadFixedSizeBinaryColumn", Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("fsb3")).Message, StringComparison.Ordinal);
            Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("nope"));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File, 1L << 20)]
    [InlineData(ArrowIpcFormat.Stream, 1L << 20)]
    [InlineData(ArrowIpcFormat.File, 1000)]
    [InlineData(ArrowIpcFormat.Stream, 8)]
    public async Task Node_and_Apache_Arrow_for_NET_read_decimals_and_fixed_size_binary_written_from_native_columns(ArrowIpcFormat format, long batchSize)
    {
        const long rows = 5003;
        using DecimalColumn dec9 = MakeDecimals(rows, 9, 2, Dec9, NullEvery5);
        using DecimalColumn dec38 = MakeDecimals(rows, 38, 10, Dec38, null);
        using FixedSizeBinaryColumn fsb16 = MakeBinary(rows, 16, Fsb16, r => r % 6 == 1);
        using FixedSizeBinaryColumn fsb3 = MakeBinary(rows, 3, Fsb3, null);
        string path = Path.Combine(_folder, $"native.{format}.{batchSize}.arrow");
        long live = AllocationLedger.LiveCount;
        new ArrowIpcWriter { BatchSize = batchSize }
            .Add("dec9", dec9).Add("dec38", dec38).Add("fsb16", fsb16).Add("fsb3", fsb3)
            .Write(path, format);
        Assert.Equal(live, AllocationLedger.LiveCount);

        Dictionary<string, NodeArrow.ColumnValues> node = NodeArrow.Values(path);
        Assert.Equal(("Decimal[9e+2]", dec9.NullCount), (node["dec9"].Type, node["dec9"].Nulls));
        Assert.Equal(("Decimal[38e+10]", 0L), (node["dec38"].Type, node["dec38"].Nulls));
        Assert.Equal(("FixedSizeBinary[16]", fsb16.NullCount), (node["fsb16"].Type, node["fsb16"].Nulls));
        Assert.Equal(("FixedSizeBinary[3]", 0L), (node["fsb3"].Type, node["fsb3"].Nulls));
        for (long r = 0; r < rows; r++)
        {
            Assert.Equal(NullEvery5(r) ? null : Text(Dec9(r)), node["dec9"].Values[r]);
            Assert.Equal(Text(Dec38(r)), node["dec38"].Values[r]);
            Assert.Equal(r % 6 == 1 ? null : Convert.ToHexStringLower(Fsb16(r)), node["fsb16"].Values[r]);
            Assert.Equal(Convert.ToHexStringLower(Fsb3(r)), node["fsb3"].Values[r]);
        }

        // Apache Arrow for .NET, batch by batch: the decimal's text and the binary's bytes.
        await using FileStream stream = File.OpenRead(path);
        using ArrowStreamReader other = format == ArrowIpcFormat.File ? new ArrowFileReader(stream) : new ArrowStreamReader(stream);
        long row = 0;
        while (await other.ReadNextRecordBatchAsync() is RecordBatch batch)
        {
            using (batch)
            {
                var small = (Decimal128Array)batch.Column("dec9");
                var large = (Decimal128Array)batch.Column("dec38");
                var binary = (FixedSizeBinaryArray)batch.Column("fsb16");
                var narrow = (FixedSizeBinaryArray)batch.Column("fsb3");
                for (int i = 0; i < batch.Length; i++, row++)
                {
                    Assert.Equal(dec9.IsNull(row) ? null : dec9.ToString(row), small.GetString(i));
                    Assert.Equal(dec38.ToString(row), large.GetString(i));
                    Assert.Equal(fsb16.IsNull(row), binary.IsNull(i));
                    if (!binary.IsNull(i))
                    {
                        Assert.Equal(Fsb16(row), binary.GetBytes(i).ToArray());
                    }

                    Assert.Equal(Fsb3(row), narrow.GetBytes(i).ToArray());
                }
            }
        }

        Assert.Equal(rows, row);

        // And our own reader, batch boundaries and all.
        using var reader = new ArrowIpcReader(path);
        Assert.Equal((rows + batchSize - 1) / batchSize, reader.BatchCount);
        CheckDecimals(reader, "dec9", 9, 2, Dec9, NullEvery5, rows);
        CheckBinary(reader, "fsb16", 16, Fsb16, r => r % 6 == 1, rows);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public async Task Big_endian_decimals_read_as_the_same_values_and_fixed_size_binary_as_the_same_bytes(ArrowIpcFormat format)
    {
        const long rows = 3001;
        using DecimalColumn dec38 = MakeDecimals(rows, 38, 4, Dec38, r => r % 11 == 5);
        using FixedSizeBinaryColumn fsb16 = MakeBinary(rows, 16, Fsb16, null);
        var stream = new MemoryStream();
        new ArrowIpcWriter { BatchSize = 1000, BigEndian = true }.Add("dec38", dec38).Add("fsb16", fsb16).Write(stream, format);

        // As written: each decimal is its 16 bytes reversed as one integer (Apache Arrow for .NET takes them as they are); the binary values are untouched.
        stream.Position = 0;
        using (ArrowStreamReader other = format == ArrowIpcFormat.File ? new ArrowFileReader(stream, leaveOpen: true) : new ArrowStreamReader(stream, leaveOpen: true))
        {
            long row = 0;
            while (await other.ReadNextRecordBatchAsync() is RecordBatch batch)
            {
                using (batch)
                {
                    var raw = (Decimal128Array)batch.Column(0);
                    var binary = (FixedSizeBinaryArray)batch.Column(1);
                    for (int i = 0; i < batch.Length; i++, row++)
                    {
                        ReadOnlySpan<byte> bytes = raw.ValueBuffer.Span.Slice(16 * (raw.Offset + i), 16);
                        Assert.Equal((UInt128)Dec38(row), BinaryPrimitives.ReadUInt128BigEndian(bytes));
                        Assert.Equal(Fsb16(row), binary.GetBytes(i).ToArray());
                    }
                }
            }

            Assert.Equal(rows, row);
        }

        stream.Position = 0;
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream, format))
        {
            Assert.True(reader.IsBigEndian);
            Assert.Equal(4, reader.BatchCount);
            CheckDecimals(reader, "dec38", 38, 4, Dec38, r => r % 11 == 5, rows);
            CheckBinary(reader, "fsb16", 16, Fsb16, null, rows);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_stored_decimal_with_more_digits_than_its_precision_is_refused_naming_the_row()
    {
        long live = AllocationLedger.LiveCount;
        var stream = new MemoryStream();
        using (var values = new HugeArray<Int128>(3))
        {
            // Written as a DECIMAL(29, 0), which holds them, then forged to DECIMAL(4, 0), which does not hold
            // row 1's 29 digits: only a malformed input holds such a value (the writer refuses to make one).
            values[0] = 9999;
            values[1] = -Int128.Parse("12345678901234567890123456789", CultureInfo.InvariantCulture);
            values[2] = 5;
            using var column = new DecimalColumn(values, null, 3, 29, 0);
            new ArrowIpcWriter().Add("d", column).Write(stream, ArrowIpcFormat.Stream);
        }

        using (var reader = new ArrowIpcReader(new MemoryStream(ReplaceInSchema(stream.ToArray(), 29, 4))))
        {
            var error = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose());
            Assert.Contains("'d'", error.Message, StringComparison.Ordinal);
            Assert.Contains("row 1", error.Message, StringComparison.Ordinal);
            Assert.Contains("precision of 4", error.Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(false, ArrowIpcFormat.File)]
    [InlineData(false, ArrowIpcFormat.Stream)]
    [InlineData(true, ArrowIpcFormat.File)]
    public void Writing_a_decimal_with_more_digits_than_its_precision_is_refused_before_any_byte(bool toPath, ArrowIpcFormat format)
    {
        long live = AllocationLedger.LiveCount;
        string path = Path.Combine(_folder, "past-precision.arrow");
        var stream = new MemoryStream();
        using (var values = new HugeArray<Int128>(4))
        using (var validity = new HugeArray<byte>(1))
        {
            values[0] = 9999;
            values[1] = -99999; // five digits in a DECIMAL(4, 2), on a null row: not a value, so written
            values[2] = -9999;
            values[3] = 12;
            validity[0] = 0b1101;
            using var column = new DecimalColumn(values, validity, 4, 4, 2);
            var writer = new ArrowIpcWriter().Add("d", column);
            WriteTo(writer);
            Assert.True(stream.Length > 0 || File.Exists(path));

            // A valid row past the precision, set after the column was added: refused when written.
            values[3] = 10000;
            stream = new MemoryStream();
            File.Delete(path);
            var error = Assert.Throws<InvalidOperationException>(() => WriteTo(writer));
            Assert.Contains("'d' holds 10000 (unscaled) at row 3", error.Message, StringComparison.Ordinal);
            Assert.Contains("precision of 4 (scale 2)", error.Message, StringComparison.Ordinal);
            Assert.Equal(0, stream.Length);
            Assert.False(File.Exists(path));

            // The same value on a null row is written.
            validity[0] = 0b0101;
            WriteTo(writer);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);

        void WriteTo(ArrowIpcWriter writer)
        {
            if (toPath)
            {
                writer.Write(path, format);
            }
            else
            {
                writer.Write(stream, format);
            }
        }
    }

    [Theory]
    [InlineData(0, typeof(InvalidDataException), "its precision is 0")]
    [InlineData(77, typeof(NotSupportedException), "Decimal(77, 3, 128)")]
    public void A_forged_precision_is_refused_naming_the_column(int precision, Type expected, string text)
    {
        // Precision 29, scale 3: the schema's only int32 29, which the test finds and replaces.
        byte[] input = WriteForForging(precision: 29, byteWidth: 5);
        byte[] forged = ReplaceInSchema(input, 29, precision);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(new MemoryStream(forged)))
        {
            Assert.Equal(precision, reader.Fields[0].Precision);
            Exception e = Assert.Throws(expected, () => reader.ReadDecimalColumn("d").Dispose());
            Assert.Contains("'d'", e.Message, StringComparison.Ordinal);
            Assert.Contains(text, e.Message, StringComparison.Ordinal);

            // The columns beside it are read.
            using FixedSizeBinaryColumn binary = reader.ReadFixedSizeBinaryColumn("b");
            Assert.Equal(Rows, binary.Length);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-3)]
    [InlineData(int.MinValue)]
    public void A_forged_byte_width_below_one_is_invalid_data_naming_the_column(int width)
    {
        byte[] input = WriteForForging(precision: 38, byteWidth: 12345);
        byte[] forged = ReplaceInSchema(input, 12345, width);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(new MemoryStream(forged)))
        {
            Assert.Equal(width, reader.Fields[1].ByteWidth);
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadFixedSizeBinaryColumn("b").Dispose());
            Assert.Contains($"'b' is FixedSizeBinary({width}): its byte width is {width}", e.Message, StringComparison.Ordinal);
            using DecimalColumn decimals = reader.ReadDecimalColumn("d");
            Assert.Equal(Dec38(Rows - 1), decimals.GetUnscaled(Rows - 1));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Value_buffers_shorter_than_their_rows_are_invalid_data(ArrowIpcFormat format)
    {
        byte[] input = WriteForForging(precision: 38, byteWidth: 12345, format);
        long live = AllocationLedger.LiveCount;

        // The decimal buffer (offset 0, 16 bytes a row) one byte short.
        byte[] shortDecimals = (byte[])input.Clone();
        BinaryPrimitives.WriteInt64LittleEndian(shortDecimals.AsSpan(FindPair(input, 0, Rows * 16) + 8), (Rows * 16) - 1);
        using (var reader = new ArrowIpcReader(new MemoryStream(shortDecimals), format))
        {
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("d").Dispose());
            Assert.Contains($"value buffer of column 'd' holds {(Rows * 16) - 1:N0} bytes ({Rows * 16:N0} needed)", e.Message, StringComparison.Ordinal);
        }

        // The binary buffer, after the decimals' (padded to 8), one value short.
        byte[] shortBinary = (byte[])input.Clone();
        BinaryPrimitives.WriteInt64LittleEndian(shortBinary.AsSpan(FindPair(input, Rows * 16, Rows * 12345L) + 8), (Rows - 1) * 12345L);
        using (var reader = new ArrowIpcReader(new MemoryStream(shortBinary), format))
        {
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadFixedSizeBinaryColumn("b").Dispose());
            Assert.Contains("column 'b'", e.Message, StringComparison.Ordinal);
            Assert.Contains($"({Rows * 12345L:N0} needed)", e.Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Random_damage_is_an_exception_of_the_documented_kinds_never_a_crash(ArrowIpcFormat format)
    {
        byte[] input = WriteForForging(precision: 38, byteWidth: 5, format);
        var random = new Random(4242);
        long live = AllocationLedger.LiveCount;
        for (int i = 0; i < 2000; i++)
        {
            byte[] forged = (byte[])input.Clone();
            for (int flips = random.Next(1, 4); flips > 0; flips--)
            {
                // Mostly the metadata: the schema and batch messages at the start, the footer at the end.
                int span = Math.Min(640, forged.Length);
                int at = random.Next(4) switch { 0 => random.Next(forged.Length), 1 => forged.Length - 1 - random.Next(span), _ => random.Next(span) };
                forged[at] = (byte)random.Next(256);
            }

            try
            {
                using var reader = new ArrowIpcReader(new MemoryStream(forged), format);
                reader.ReadDecimalColumn("d").Dispose();
                reader.ReadFixedSizeBinaryColumn("b").Dispose();
            }
            catch (Exception e) when (e is InvalidDataException or NotSupportedException or InvalidOperationException or ArgumentException)
            {
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void The_writer_refuses_disposed_and_mismatched_columns_and_writes_columns_of_no_rows()
    {
        using DecimalColumn decimals = MakeDecimals(10, 5, 1, Dec1, null);
        FixedSizeBinaryColumn disposed = MakeBinary(10, 4, Fsb16, null);
        disposed.Dispose();
        using FixedSizeBinaryColumn shorter = MakeBinary(9, 4, Fsb16, null);
        var writer = new ArrowIpcWriter().Add("d", decimals);
        Assert.Throws<ObjectDisposedException>(() => writer.Add("b", disposed));
        Assert.Contains("'b' has 9 rows", Assert.Throws<ArgumentException>(() => writer.Add("b", shorter)).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => writer.Add("d", decimals));
        Assert.Throws<ArgumentNullException>(() => writer.Add("x", (DecimalColumn)null!));
        Assert.Equal(1, writer.ColumnCount);

        using DecimalColumn noDecimals = MakeDecimals(0, 38, 38, Dec1, null);
        using FixedSizeBinaryColumn noBinary = MakeBinary(0, 7, Fsb3, null);
        var stream = new MemoryStream();
        new ArrowIpcWriter().Add("d", noDecimals).Add("b", noBinary).Write(stream, ArrowIpcFormat.Stream);
        stream.Position = 0;
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream))
        {
            using DecimalColumn d = reader.ReadDecimalColumn("d");
            using FixedSizeBinaryColumn b = reader.ReadFixedSizeBinaryColumn("b");
            Assert.Equal((0L, 38, 38), (d.Length, d.Precision, d.Scale));
            Assert.Equal((0L, 7), (b.Length, b.ByteWidth));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    private const long Rows = 113;

    private static bool NullEvery5(long r) => r % 5 == 2;

    // The formulas of arrow-check.js's decimalColumns.
    private static Int128 Dec1(long r) => (r % 19) - 9;

    private static Int128 Dec9(long r) => ((Int128)r * 7919193 % 1_000_000_000) - 500_000_000;

    private static Int128 Dec18(long r) => ((Int128)r * 123456789012345L % 1_000_000_000_000_000_000L) - 500_000_000_000_000_000L;

    private static Int128 Dec38(long r) => r switch
    {
        0 => Max38,
        1 => -Max38,
        _ => (r % 2 == 1 ? -1 : 1) * (((Int128)r * Pow33) + ((Int128)r * r)),
    };

    // The value's last `precision` digits, keeping its sign: a value the column's precision holds.
    private static Int128 FitTo(Int128 value, int precision)
    {
        Int128 limit = Int128.One;
        for (int i = 0; i < precision; i++)
        {
            limit *= 10;
        }

        return value % limit;
    }

    private static byte[] Fsb16(long r) => [.. Enumerable.Range(0, 16).Select(i => (byte)(((r * 31) + (i * 7)) & 255))];

    private static byte[] Fsb3(long r) => [.. Enumerable.Range(0, 3).Select(i => (byte)((r + (i * 101)) & 255))];

    private static string Text(Int128 value) => value.ToString(CultureInfo.InvariantCulture);

    private static DecimalColumn MakeDecimals(long rows, int precision, int scale, Func<long, Int128> value, Func<long, bool>? isNull)
    {
        var values = new HugeArray<Int128>(Math.Max(1, rows));
        HugeArray<byte>? validity = isNull is null ? null : new HugeArray<byte>(Math.Max(1, (rows + 7) / 8));
        for (long r = 0; r < rows; r++)
        {
            values[r] = value(r);
            if (validity is not null && !isNull!(r))
            {
                validity[r >> 3] |= (byte)(1 << (int)(r & 7));
            }
        }

        return new DecimalColumn(values, validity, rows, precision, scale);
    }

    private static FixedSizeBinaryColumn MakeBinary(long rows, int width, Func<long, byte[]> value, Func<long, bool>? isNull)
    {
        var data = new HugeArray<byte>(Math.Max(1, rows * width));
        HugeArray<byte>? validity = isNull is null ? null : new HugeArray<byte>(Math.Max(1, (rows + 7) / 8));
        for (long r = 0; r < rows; r++)
        {
            byte[] bytes = value(r);
            for (int i = 0; i < width; i++)
            {
                data[(r * width) + i] = bytes[i % bytes.Length];
            }

            if (validity is not null && !isNull!(r))
            {
                validity[r >> 3] |= (byte)(1 << (int)(r & 7));
            }
        }

        return new FixedSizeBinaryColumn(data, validity, rows, width);
    }

    private static void CheckDecimals(ArrowIpcReader reader, string column, int precision, int scale, Func<long, Int128> expected, Func<long, bool>? isNull, long rows = IpcExpected.Rows)
    {
        using DecimalColumn read = reader.ReadDecimalColumn(column);
        Assert.Equal((rows, precision, scale), (read.Length, read.Precision, read.Scale));
        Assert.Equal(isNull is null, read.Validity is null);
        for (long r = 0; r < rows; r++)
        {
            bool isNullHere = isNull?.Invoke(r) ?? false;
            if (read.IsNull(r) != isNullHere || (!isNullHere && read.GetUnscaled(r) != expected(r)))
            {
                Assert.Fail($"Column {column}, row {r}: {(read.IsNull(r) ? "null" : read.GetUnscaled(r))}, expected {(isNullHere ? "null" : expected(r))}.");
            }
        }
    }

    private static void CheckBinary(ArrowIpcReader reader, string column, int width, Func<long, byte[]> expected, Func<long, bool>? isNull, long rows = IpcExpected.Rows)
    {
        using FixedSizeBinaryColumn read = reader.ReadFixedSizeBinaryColumn(column);
        Assert.Equal((rows, width), (read.Length, read.ByteWidth));
        Assert.Equal(isNull is null, read.Validity is null);
        for (long r = 0; r < rows; r++)
        {
            bool isNullHere = isNull?.Invoke(r) ?? false;
            if (read.IsNull(r) != isNullHere || (!isNullHere && !read.ValueEquals(r, expected(r))))
            {
                Assert.Fail($"Column {column}, row {r}: the bytes or nullness differ from Node's.");
            }
        }
    }

    // A decimal column "d" (scale 3) and a fixed-size binary column "b" of Rows rows each, written by our writer.
    private static byte[] WriteForForging(int precision, int byteWidth, ArrowIpcFormat format = ArrowIpcFormat.Stream)
    {
        using DecimalColumn decimals = MakeDecimals(Rows, precision, 3, r => FitTo(Dec38(r), precision), null);
        using FixedSizeBinaryColumn binary = MakeBinary(Rows, byteWidth, Fsb16, null);
        var stream = new MemoryStream();
        new ArrowIpcWriter().Add("d", decimals).Add("b", binary).Write(stream, format);
        return stream.ToArray();
    }

    // Replaces the one int32 `from` in the schema message (the stream's first) with `to`.
    private static byte[] ReplaceInSchema(byte[] input, int from, int to)
    {
        int schemaEnd = 8 + BinaryPrimitives.ReadInt32LittleEndian(input.AsSpan(4));
        Span<byte> pattern = stackalloc byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(pattern, from);
        int at = input.AsSpan(0, schemaEnd).IndexOf(pattern);
        Assert.True(at >= 0 && input.AsSpan(at + 1, schemaEnd - at - 1).IndexOf(pattern) < 0, $"{from} is not once in the schema.");
        byte[] forged = (byte[])input.Clone();
        BinaryPrimitives.WriteInt32LittleEndian(forged.AsSpan(at), to);
        return forged;
    }

    private static int FindPair(byte[] bytes, long first, long second)
    {
        Span<byte> pattern = stackalloc byte[16];
        BinaryPrimitives.WriteInt64LittleEndian(pattern, first);
        BinaryPrimitives.WriteInt64LittleEndian(pattern[8..], second);
        int at = bytes.AsSpan().IndexOf(pattern);
        Assert.True(at >= 0, $"({first}, {second}) is not in the input.");
        return at;
    }
}
