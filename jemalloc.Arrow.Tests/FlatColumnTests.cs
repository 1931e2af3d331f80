using System.Globalization;
using Apache.Arrow;
using Apache.Arrow.Arrays;
using Apache.Arrow.C;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Decimal and fixed-size binary columns as Arrow Decimal128 and FixedSizeBinary arrays: the buffers are the
/// columns' blocks, Node reads IPC written from them value by value, and a C Data Interface export holds them
/// until its release.
/// </summary>
public sealed unsafe class FlatColumnTests : LedgerBalanced
{
    private const int Rows = 5000;
    private readonly string _folder = Directory.CreateTempSubdirectory("jemalloc-arrow-flat-").FullName;

    public override void Dispose()
    {
        Directory.Delete(_folder, recursive: true);
        base.Dispose();
    }

    [Fact]
    public void A_decimal_column_is_a_Decimal128_array_over_its_own_blocks()
    {
        using DecimalColumn decimals = MakeDecimals(Rows, 38, 10);
        using NativeArrowColumn view = decimals.ToArrow();
        var array = (Decimal128Array)view.Array;
        Assert.Equal(new Decimal128Type(38, 10).Name, view.DataType.Name);
        Assert.Equal((38, 10), (array.Precision, array.Scale));
        Assert.Equal(decimals.Values.Pointer, view.GetValueAddress(0));
        using (System.Buffers.MemoryHandle pin = array.ValueBuffer.Memory.Pin())
        {
            Assert.Equal(decimals.Values.Pointer, (nint)pin.Pointer);
        }

        Assert.Equal(decimals.NullCount, array.NullCount);
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(decimals.IsNull(i), array.IsNull(i));
            if (!decimals.IsNull(i))
            {
                Assert.Equal(decimals.ToString(i), array.GetString(i));
            }
        }

        // A write through the native column is seen by Arrow: the same memory, not a copy.
        decimals.Values[0] = -12345;
        Assert.Equal(-0.0000012345m, array.GetValue(0));
        Assert.Throws<InvalidOperationException>(decimals.Dispose);
    }

    [Fact]
    public void A_fixed_size_binary_column_is_a_FixedSizeBinary_array_over_its_own_blocks()
    {
        using FixedSizeBinaryColumn binary = MakeBinary(Rows, 5);
        using NativeArrowColumn view = binary.ToArrow(maxChunkLength: 1024);
        Assert.Equal(5, view.ChunkCount);
        Assert.Equal(5, ((FixedSizeBinaryType)view.DataType).ByteWidth);
        Assert.Equal(binary.Data.Pointer + (1024 * 5), view.GetValueAddress(1));
        Assert.Equal(binary.NullCount, view.NullCount);
        var value = new byte[5];
        for (int i = 0; i < Rows; i++)
        {
            var chunk = (FixedSizeBinaryArray)view.Chunks.ArrowArray(i / 1024);
            Assert.Equal(binary.IsNull(i), chunk.IsNull(i % 1024));
            if (!binary.IsNull(i))
            {
                binary.CopyValue(i, value);
                Assert.Equal(value, chunk.GetBytes(i % 1024).ToArray());
            }
        }

        Assert.Throws<ArgumentException>(() => binary.ToArrow(maxChunkLength: 1001));
    }

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public void Node_reads_IPC_written_from_decimal_and_fixed_size_binary_columns_value_by_value(string format)
    {
        using DecimalColumn small = MakeDecimals(Rows, 9, 2);
        using DecimalColumn large = MakeDecimals(Rows, 38, 4);
        using FixedSizeBinaryColumn binary = MakeBinary(Rows, 16);
        string path = Path.Combine(_folder, $"flat.{format}.arrow");
        using (NativeArrowColumn smallView = small.ToArrow())
        using (NativeArrowColumn largeView = large.ToArrow())
        using (NativeArrowColumn binaryView = binary.ToArrow())
        {
            var schema = new Schema.Builder()
                .Field(f => f.Name("small").DataType(smallView.DataType).Nullable(true))
                .Field(f => f.Name("large").DataType(largeView.DataType).Nullable(true))
                .Field(f => f.Name("binary").DataType(binaryView.DataType).Nullable(true))
                .Build();
            var batch = new RecordBatch(schema, [smallView.Array, largeView.Array, binaryView.Array], Rows);
            using FileStream stream = File.Create(path);
            using ArrowStreamWriter writer = format == "file" ? new ArrowFileWriter(stream, schema) : new ArrowStreamWriter(stream, schema);
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        Dictionary<string, NodeArrow.ColumnValues> node = NodeArrow.Values(path);
        Assert.Equal("Decimal[9e+2]", node["small"].Type);
        Assert.Equal("Decimal[38e+4]", node["large"].Type);
        Assert.Equal("FixedSizeBinary[16]", node["binary"].Type);
        Assert.Equal((small.NullCount, large.NullCount, binary.NullCount), (node["small"].Nulls, node["large"].Nulls, node["binary"].Nulls));
        var bytes = new byte[16];
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(small.IsNull(i) ? null : small.GetUnscaled(i).ToString(CultureInfo.InvariantCulture), node["small"].Values[i]);
            Assert.Equal(large.IsNull(i) ? null : large.GetUnscaled(i).ToString(CultureInfo.InvariantCulture), node["large"].Values[i]);
            binary.CopyValue(i, bytes);
            Assert.Equal(binary.IsNull(i) ? null : Convert.ToHexStringLower(bytes), node["binary"].Values[i]);
        }
    }

    [Fact]
    public void A_C_Data_Interface_export_of_a_decimal_column_holds_it_until_released()
    {
        var decimals = MakeDecimals(1000, 20, 3);
        CArrowArray* exported = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            using (NativeArrowColumn view = decimals.ToArrow())
            {
                view.ExportChunk(0, exported);
                CArrowSchemaExporter.ExportType(view.DataType, schema);
            }

            Assert.Throws<InvalidOperationException>(decimals.Dispose);
            Assert.Equal(decimals.Values.Pointer, (nint)exported->buffers[1]);
            IArrowType type = CArrowSchemaImporter.ImportType(schema);
            Assert.Equal((20, 3), (((Decimal128Type)type).Precision, ((Decimal128Type)type).Scale));
            using (var imported = (Decimal128Array)CArrowArrayImporter.ImportArray(exported, type))
            {
                Assert.Equal(decimals.NullCount, imported.NullCount);
                for (int i = 0; i < 1000; i++)
                {
                    Assert.Equal(decimals.IsNull(i) ? null : decimals.ToString(i), imported.IsNull(i) ? null : imported.GetString(i));
                }
            }

            decimals.Dispose();
            Assert.False(decimals.Values.IsValid);
        }
        finally
        {
            CArrowArray.Free(exported);
            CArrowSchema.Free(schema);
        }
    }

    [Fact]
    public void A_C_program_reads_exported_decimal_and_fixed_size_binary_chunks_with_the_same_sums()
    {
        using DecimalColumn decimals = MakeDecimals(Rows, 38, 6);
        using FixedSizeBinaryColumn binary = MakeBinary(Rows, 7);
        Int128 decimalSum = 0;
        ulong byteSum = 0;
        var value = new byte[7];
        for (int i = 0; i < Rows; i++)
        {
            if (!decimals.IsNull(i))
            {
                decimalSum += decimals.GetUnscaled(i);
            }

            if (!binary.IsNull(i))
            {
                binary.CopyValue(i, value);
                byteSum += (ulong)value.Sum(b => b);
            }
        }

        CConsumer.Result seen = ExportAndRead(decimals.ToArrow(), decimals.Values.Pointer);
        Assert.Equal("d:38,6", seen.FormatText());
        Assert.Equal((Rows, decimals.NullCount, decimals.NullCount), (seen.Length, seen.NullCount, seen.DeclaredNullCount));
        Assert.Equal(decimalSum, seen.DecimalSum);
        seen = ExportAndRead(binary.ToArrow(), binary.Data.Pointer);
        Assert.Equal("w:7", seen.FormatText());
        Assert.Equal(binary.NullCount, seen.NullCount);
        Assert.Equal(byteSum, seen.WideSumLow);
    }

    [Fact]
    public void A_C_Data_Interface_export_of_a_fixed_size_binary_column_gives_its_bytes()
    {
        using FixedSizeBinaryColumn binary = MakeBinary(300, 16);
        CArrowArray* exported = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            using (NativeArrowColumn view = binary.ToArrow())
            {
                view.ExportChunk(0, exported);
                CArrowSchemaExporter.ExportType(view.DataType, schema);
            }

            Assert.Equal("w:16", System.Runtime.InteropServices.Marshal.PtrToStringUTF8((nint)schema->format));
            IArrowType type = CArrowSchemaImporter.ImportType(schema);
            using (var imported = (FixedSizeBinaryArray)CArrowArrayImporter.ImportArray(exported, type))
            {
                Assert.Equal(binary.NullCount, imported.NullCount);
                for (int i = 0; i < 300; i++)
                {
                    Assert.Equal(binary.IsNull(i), imported.IsNull(i));
                    Assert.True(binary.IsNull(i) || binary.ValueEquals(i, imported.GetBytes(i)));
                }
            }
        }
        finally
        {
            CArrowArray.Free(exported);
            CArrowSchema.Free(schema);
        }
    }

    [Fact]
    public void A_column_of_no_rows_is_one_empty_array_and_a_disposed_column_cannot_be_viewed()
    {
        using (var empty = new DecimalColumn(new HugeArray<Int128>(1), null, 0, 5, 1))
        using (NativeArrowColumn view = empty.ToArrow())
        {
            Assert.Equal(0, view.Length);
            Assert.Equal(1, view.ChunkCount);
            Assert.Equal(0, view.Array.Length);
        }

        var gone = new FixedSizeBinaryColumn(new HugeArray<byte>(4), null, 2, 2);
        gone.Dispose();
        Assert.Throws<ObjectDisposedException>(() => gone.ToArrow());
        Assert.Throws<ArgumentNullException>(() => ((DecimalColumn)null!).ToArrow());
    }

    // Exports the view's one chunk and its type, disposes the view, and has the C program read and release them.
    private static CConsumer.Result ExportAndRead(NativeArrowColumn view, nint values)
    {
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            CArrowSchemaExporter.ExportType(view.DataType, schema);
            view.ExportChunk(0, array);
            view.Dispose();
            CConsumer.Result seen = CConsumer.Read(schema, array, values);
            Assert.Equal((1, 1), (seen.ZeroCopy, seen.Released));
            return seen;
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }

    private static DecimalColumn MakeDecimals(int rows, int precision, int scale)
    {
        var values = new HugeArray<Int128>(rows);
        var validity = new HugeArray<byte>((rows + 7) / 8, (byte)0xFF);
        Int128 limit = Int128.Parse("1".PadRight(precision + 1, '0'), CultureInfo.InvariantCulture);
        for (int i = 0; i < rows; i++)
        {
            values[i] = (Int128.Max(1, limit / 9973) * (i * 7919 % 19946 - 9973)) % limit;
            if (i % 13 == 4)
            {
                values[i] = 0;
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        return new DecimalColumn(values, validity, rows, precision, scale);
    }

    private static FixedSizeBinaryColumn MakeBinary(int rows, int width)
    {
        var data = new HugeArray<byte>((long)rows * width);
        var validity = new HugeArray<byte>((rows + 7) / 8, (byte)0xFF);
        for (long i = 0; i < data.Length; i++)
        {
            data[i] = (byte)(i * 31 + (i / width));
        }

        for (int i = 0; i < rows; i++)
        {
            if (i % 9 == 2)
            {
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        return new FixedSizeBinaryColumn(data, validity, rows, width);
    }
}
