using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Hostile review 3: optional columns whose DELTA encodings declare fewer values than their definition
/// levels say rows hold. parquet-cpp decodes the values the page declares and returns that count without
/// an error, so every read path must refuse the batch; before, the numeric, decimal, fixed-size binary and
/// FLOAT16 reads took the missing values from memory no value had been decoded into (the block's
/// neighbour, a stale page buffer) or crashed with a NullReferenceException.
/// </summary>
public sealed class ForgedValueCountTests : LedgerBalanced
{
    private const int Rows = 20;
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Reads =>
    [
        "int64", "int16 as short", "int16 as int", "decimal on int64", "uuid", "float16", "string", "dictionary",
    ];

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Theory]
    [MemberData(nameof(Reads))]
    public void A_page_declaring_fewer_values_than_defined_rows_is_InvalidDataException_naming_the_column(string read)
    {
        string path = _folder.File("forged.parquet");
        Write(path, read);
        // The file as written reads right: what fails below is the forgery, not the column's type.
        Assert.Equal(Expected(read), Read(path, read));

        Assert.True(LowerDeltaCounts(path) > 0, "no DELTA header with a count of 10 was found to forge");
        var error = Assert.Throws<InvalidDataException>(() => Read(path, read));
        Assert.Contains("column 'v'", error.Message, StringComparison.Ordinal);
        Assert.Contains("2 values for the 10 rows with a value", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_required_column_declaring_fewer_values_than_rows_is_InvalidDataException()
    {
        string path = _folder.File("required.parquet");
        using (var properties = Properties(Encoding.DeltaBinaryPacked))
        using (var writer = new ParquetFileWriter(path, [new Column<long>("v")], properties))
        {
            using RowGroupWriter group = writer.AppendRowGroup();
            using LogicalColumnWriter<long> column = group.NextColumn().LogicalWriter<long>();
            column.WriteBatch([.. Enumerable.Range(0, 10).Select(i => 1000L + i)]);
            writer.Close();
        }

        Assert.True(LowerDeltaCounts(path) > 0);
        using var reader = new NativeParquetReader(path);
        Assert.Contains("column 'v'", Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("v").Dispose()).Message, StringComparison.Ordinal);
    }

    // Every other row null: 10 values among 20 rows, written uncompressed and without a dictionary in
    // the DELTA encoding that holds the column's type.
    private static void Write(string path, string read)
    {
        switch (read)
        {
            case "int64":
                Write(path, new Column<long?>("v"), Values(i => (long?)(1000 + i)), Encoding.DeltaBinaryPacked);
                break;
            case "int16 as short" or "int16 as int":
                Write(path, new Column<short?>("v"), Values(i => (short?)(1000 + i)), Encoding.DeltaBinaryPacked);
                break;
            case "decimal on int64":
                WritePhysical(path, new PrimitiveNode("v", Repetition.Optional, LogicalType.Decimal(18, 2), PhysicalType.Int64), [.. Enumerable.Range(0, 10).Select(i => 1000L + i)]);
                break;
            case "uuid":
                Write(path, new Column<Guid?>("v", LogicalType.Uuid()), Values(i => (Guid?)new Guid(1000 + i, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)), Encoding.DeltaByteArray);
                break;
            case "float16":
                Write(path, new Column<Half?>("v"), Values(i => (Half?)(Half)(1000 + i)), Encoding.DeltaByteArray);
                break;
            default:
                Write(path, new Column<string?>("v", LogicalType.String()), Values(i => (string?)$"value {1000 + i}"), Encoding.DeltaLengthByteArray);
                break;
        }
    }

    private static string Read(string path, string read)
    {
        using var reader = new NativeParquetReader(path);
        switch (read)
        {
            case "int64":
            {
                using NullableColumn<long> column = reader.ReadNullableColumn<long>("v");
                return Show(column.Length, column.IsNull, i => column.Values[i].ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "int16 as short":
            {
                using NullableColumn<short> column = reader.ReadNullableColumn<short>("v");
                return Show(column.Length, column.IsNull, i => column.Values[i].ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "int16 as int":
            {
                using NullableColumn<int> column = reader.ReadNullableColumn<int>("v");
                return Show(column.Length, column.IsNull, i => column.Values[i].ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "decimal on int64":
            {
                using DecimalColumn column = reader.ReadDecimalColumn("v");
                return Show(column.Length, column.IsNull, i => column.GetUnscaled(i).ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "uuid":
            {
                using FixedSizeBinaryColumn column = reader.ReadFixedSizeBinaryColumn("v");
                return Show(column.Length, column.IsNull, i => BitConverter.ToInt32(column.GetGuid(i).ToByteArray()).ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "float16":
            {
                using NullableColumn<Half> column = reader.ReadNullableColumn<Half>("v");
                return Show(column.Length, column.IsNull, i => ((int)column.Values[i]).ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            case "string":
            {
                using NativeStringColumn column = reader.ReadStringColumn("v");
                return Show(column.Length, column.IsNull, i => column.GetString(i)![6..]);
            }

            default:
            {
                using NativeDictionaryColumn column = reader.ReadDictionaryColumn("v");
                return Show(column.Length, column.IsNull, i => column.GetString(i)![6..]);
            }
        }
    }

    private static string Expected(string read) => Show(Rows, i => i % 2 == 1, i => (1000 + (i / 2)).ToString(System.Globalization.CultureInfo.InvariantCulture));

    private static string Show(long length, Func<long, bool> isNull, Func<long, string> value) =>
        string.Join(",", Enumerable.Range(0, (int)length).Select(i => isNull(i) ? "null" : value(i)));

    private static T[] Values<T>(Func<int, T> value) => [.. Enumerable.Range(0, Rows).Select(i => i % 2 == 0 ? value(i / 2) : default!)];

    private static WriterProperties Properties(Encoding encoding) =>
        new WriterPropertiesBuilder().Compression(Compression.Uncompressed).DisableDictionary().Encoding(encoding).Build();

    private static void Write<T>(string path, Column column, T[] values, Encoding encoding)
    {
        using WriterProperties properties = Properties(encoding);
        using var writer = new ParquetFileWriter(path, [column], properties);
        using RowGroupWriter group = writer.AppendRowGroup();
        using LogicalColumnWriter<T> logical = group.NextColumn().LogicalWriter<T>();
        logical.WriteBatch(values);
        writer.Close();
    }

    private static void WritePhysical(string path, Node node, long[] values)
    {
        short[] levels = [.. Enumerable.Range(0, Rows).Select(i => (short)(i % 2 == 0 ? 1 : 0))];
        using WriterProperties properties = Properties(Encoding.DeltaBinaryPacked);
        using var schema = new GroupNode("schema", Repetition.Required, [node]);
        using var writer = new ParquetFileWriter(path, schema, properties);
        using RowGroupWriter group = writer.AppendRowGroup();
        using var column = (ColumnWriter<long>)group.NextColumn();
        column.WriteBatch(Rows, levels, null, values);
        writer.Close();
    }

    // A DELTA_BINARY_PACKED header (also the lengths inside DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY) is
    // the block size (128 or 256, a varint), the miniblocks per block (4) and the total count: 10 values
    // become 2 wherever such a header occurs. Returns how many were changed.
    private static int LowerDeltaCounts(string path)
    {
        byte[] file = File.ReadAllBytes(path);
        int changed = 0;
        for (int at = 4; at + 4 <= file.Length; at++)
        {
            if (file[at] == 0x80 && file[at + 1] is 0x01 or 0x02 && file[at + 2] == 0x04 && file[at + 3] == 0x0A)
            {
                file[at + 3] = 0x02;
                changed++;
            }
        }

        File.WriteAllBytes(path, file);
        return changed;
    }
}
