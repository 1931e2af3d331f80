using System.Text;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;
using jemalloc.Tests.Support;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="NativeStringColumn"/>s as Arrow arrays (utf8, large_utf8, binary, large_binary) without a
/// copy of their data, read by Apache.Arrow, by Arrow for JavaScript through IPC and by a C program
/// through the C Data Interface; and Arrow string arrays copied into native columns.
/// </summary>
public sealed class StringColumnTests : IDisposable
{
    private const int Rows = 50_003;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-arrow-strings-" + Guid.NewGuid().ToString("N"));

    public StringColumnTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private static string? Text(int i) => i % 5 == 0 ? null : $"név-{i}-" + string.Concat(Enumerable.Repeat("日本", i % 9)) + (i % 11 == 0 ? "😀" : "");

    private static string?[] Texts(int rows) => Enumerable.Range(0, rows).Select(Text).ToArray();

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public unsafe void A_text_column_is_utf8_or_large_utf8_over_its_own_data_block(bool large)
    {
        string?[] texts = Texts(Rows);
        using NativeStringColumn column = TestColumns.Strings(texts);
        using (NativeArrowColumn view = column.ToArrow(largeOffsets: large))
        {
            Assert.Equal(large ? ArrowTypeId.LargeString : ArrowTypeId.String, view.DataType.TypeId);
            Assert.Equal(1, view.ChunkCount);
            Assert.Equal(Rows, view.Length);
            Assert.Equal(texts.Count(t => t is null), view.NullCount);
            Assert.Equal(column.Data.Pointer, view.GetValueAddress(0));
            for (int row = 0; row < Rows; row++)
            {
                string? seen = large ? ((LargeStringArray)view.Array).GetString(row) : ((StringArray)view.Array).GetString(row);
                Assert.Equal(texts[row], seen);
            }

            fixed (byte* offsets = view.Array.Data.Buffers[1].Span)
            {
                // The offsets are the view's own (read once and checked), so no later change of the column's reaches Arrow.
                Assert.NotEqual(column.Offsets.Pointer, (nint)offsets);
            }

            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.True(column.Data.IsValid);
        }

        Assert.Equal(0, column.Data.Handle.LeaseCount);
        Assert.Equal(0, column.Offsets.Handle.LeaseCount);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_binary_column_is_binary_or_large_binary(bool large)
    {
        byte[][] blobs = Enumerable.Range(0, 1000).Select(i => Enumerable.Range(0, i % 13).Select(b => (byte)(b * i)).ToArray()).ToArray();
        using var builder = new NativeStringColumnBuilder(isUtf8: false);
        foreach (byte[] blob in blobs)
        {
            builder.Append(blob);
        }

        using NativeStringColumn column = builder.Build();
        using NativeArrowColumn view = column.ToArrow(large);
        Assert.Equal(large ? ArrowTypeId.LargeBinary : ArrowTypeId.Binary, view.DataType.TypeId);
        for (int row = 0; row < blobs.Length; row++)
        {
            byte[] seen = large ? ((LargeBinaryArray)view.Array).GetBytes(row).ToArray() : ((BinaryArray)view.Array).GetBytes(row).ToArray();
            Assert.Equal(blobs[row], seen);
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Chunks_cover_the_rows_in_order_with_their_nulls(bool large)
    {
        string?[] texts = Texts(10_001);
        using NativeStringColumn column = TestColumns.Strings(texts);
        using NativeArrowColumn view = column.ToArrow(large, maxChunkLength: 4096);
        Assert.Equal(3, view.ChunkCount);
        long row = 0;
        for (int c = 0; c < view.ChunkCount; c++)
        {
            IArrowArray chunk = view.Chunks.ArrowArray(c);
            for (int i = 0; i < chunk.Length; i++, row++)
            {
                string? seen = large ? ((LargeStringArray)chunk).GetString(i) : ((StringArray)chunk).GetString(i);
                Assert.Equal(texts[row], seen);
            }
        }

        Assert.Equal(texts.Length, row);
        Assert.Throws<ArgumentException>(() => column.ToArrow(large, maxChunkLength: 4095));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.ToArrow(large, maxChunkLength: -8));
    }

    [Fact]
    public void A_column_of_no_rows_is_an_empty_array()
    {
        using NativeStringColumn column = TestColumns.Strings([]);
        using NativeArrowColumn view = column.ToArrow();
        Assert.Equal(0, view.Length);
        Assert.Equal(0, ((LargeStringArray)view.Array).Length);
    }

    [Fact]
    public void Offsets_changed_to_leave_the_block_are_refused_before_Arrow_sees_them()
    {
        using NativeStringColumn column = TestColumns.Strings(["abc", "de"]);
        column.Offsets[1] = 1L << 40;
        Assert.Equal("column", Assert.Throws<ArgumentException>(() => column.ToArrow()).ParamName);
        Assert.Equal(0, column.Data.Handle.LeaseCount);
        column.Offsets[1] = 3;
        using NativeArrowColumn view = column.ToArrow();
        Assert.Equal("de", ((LargeStringArray)view.Array).GetString(1));
    }

    [Fact]
    public void A_disposed_view_throws_instead_of_reading_and_a_disposed_column_cannot_be_shown()
    {
        NativeStringColumn column = TestColumns.Strings(["abc", null, "xyz"]);
        NativeArrowColumn view = column.ToArrow();
        var array = (LargeStringArray)view.Array;
        view.Dispose();
        Assert.Throws<ObjectDisposedException>(() => array.GetString(0));
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.ToArrow());
    }

    [Theory]
    [InlineData("file", true)]
    [InlineData("stream", false)]
    public void Node_reads_IPC_written_from_string_columns_value_by_value(string format, bool large)
    {
        string?[] texts = Texts(Rows);
        byte[]?[] blobs = Enumerable.Range(0, Rows).Select(i => i % 3 == 0 ? null : BitConverter.GetBytes(i * 31L)).ToArray();
        string path = Path.Combine(_folder, $"strings.{format}.arrow");
        using (NativeStringColumn names = TestColumns.Strings(texts))
        using (NativeStringColumn binary = BuildBinary(blobs))
        using (NativeArrowColumn nameView = names.ToArrow(large))
        using (NativeArrowColumn blobView = binary.ToArrow(large))
        {
            var schema = new Schema.Builder()
                .Field(f => f.Name("name").DataType(nameView.DataType).Nullable(true))
                .Field(f => f.Name("blob").DataType(blobView.DataType).Nullable(true))
                .Build();
            var batch = new RecordBatch(schema, [nameView.Array, blobView.Array], Rows);
            using FileStream stream = File.Create(path);
            using ArrowStreamWriter writer = format == "file" ? new ArrowFileWriter(stream, schema) : new ArrowStreamWriter(stream, schema);
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        Dictionary<string, NodeArrow.StringSummary> node = NodeArrow.ReadStrings(path);
        (long nameBytes, string nameHash) = NodeArrow.StringSummary.Of(texts.Select(t => t is null ? null : Encoding.UTF8.GetBytes(t)));
        (long blobBytes, string blobHash) = NodeArrow.StringSummary.Of(blobs);
        Assert.Equal(new NodeArrow.StringSummary(large ? "LargeUtf8" : "Utf8", Rows, texts.Count(t => t is null), nameBytes, nameHash), node["name"]);
        Assert.Equal(new NodeArrow.StringSummary(large ? "LargeBinary" : "Binary", Rows, blobs.Count(b => b is null), blobBytes, blobHash), node["blob"]);
    }

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public async Task Strings_Node_wrote_copy_into_native_columns_value_by_value(string format)
    {
        string path = Path.Combine(_folder, $"node-strings.{format}.arrow");
        NodeArrow.RunScript("arrow-strings.js", "write", path, format, Rows.ToString(System.Globalization.CultureInfo.InvariantCulture));
        var names = new List<IArrowArray>();
        var tags = new List<IArrowArray>();
        var blobs = new List<IArrowArray>();
        await using (FileStream stream = File.OpenRead(path))
        {
            using ArrowStreamReader reader = format == "file" ? new ArrowFileReader(stream) : new ArrowStreamReader(stream);
            while (await reader.ReadNextRecordBatchAsync() is RecordBatch batch)
            {
                names.Add(batch.Column("name"));
                tags.Add(batch.Column("tag"));
                blobs.Add(batch.Column("blob"));
            }
        }

        using NativeStringColumn name = new ChunkedArray(names).ToNativeStringColumn(AllocationOptions.Default);
        using NativeStringColumn tag = new ChunkedArray(tags).ToNativeStringColumn(AllocationOptions.WithHugePages);
        using NativeStringColumn blob = new ChunkedArray(blobs).ToNativeStringColumn(AllocationOptions.Default);
        Assert.True(name.IsUtf8 && tag.IsUtf8);
        Assert.False(blob.IsUtf8);
        Assert.Equal(Rows, name.Length);
        Assert.Equal(Rows / 5 + 1, name.NullCount);
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(i % 5 == 0 ? null : $"név-{i}-" + string.Concat(Enumerable.Repeat("日本", i % 9)) + (i % 11 == 0 ? "😀" : ""), name.GetString(i));
            Assert.Equal($"tag{i % 97}", tag.GetString(i));
            Assert.Equal(new byte[] { (byte)(i & 255), 0, 255, (byte)((i >> 8) & 255) }.Take(i % 5).ToArray(), blob.GetBytes(i));
        }
    }

    [Fact]
    public void An_array_that_is_not_strings_or_declares_offsets_past_its_data_is_refused()
    {
        using var numbers = new HugeArray<int>(4);
        using (NativeArrowColumn view = numbers.ToArrow())
        {
            Assert.Equal("column", Assert.Throws<ArgumentException>(() => view.Chunks.ToNativeStringColumn(AllocationOptions.Default)).ParamName);
        }

        var offsets = new ArrowBuffer(new byte[] { 0, 0, 0, 0, 2, 0, 0, 0, 90, 0, 0, 0 });
        var data = new ArrowBuffer(new byte[] { 65, 66, 67, 68 });
        var forged = new StringArray(new ArrayData(StringType.Default, 2, 0, 0, [ArrowBuffer.Empty, offsets, data]));
        var refused = Assert.Throws<ArgumentException>(() => forged.ToNativeStringColumn(AllocationOptions.Default));
        Assert.Contains("outside its data buffer", refused.Message);
        var tooLong = new StringArray(new ArrayData(StringType.Default, 5, 0, 0, [ArrowBuffer.Empty, offsets, data]));
        Assert.Contains("offsets buffer", Assert.Throws<ArgumentException>(() => tooLong.ToNativeStringColumn(AllocationOptions.Default)).Message);
    }

    [LinuxOnlyFact]
    public unsafe void A_C_program_reads_an_exported_string_column_in_place()
    {
        string?[] texts = Texts(Rows);
        (long bytes, string hash) = NodeArrow.StringSummary.Of(texts.Select(t => t is null ? null : Encoding.UTF8.GetBytes(t)));
        using NativeStringColumn column = TestColumns.Strings(texts);
        foreach (bool large in new[] { true, false })
        {
            using NativeArrowColumn view = column.ToArrow(large);
            CArrowArray* array = CArrowArray.Create();
            CArrowSchema* schema = CArrowSchema.Create();
            try
            {
                CArrowSchemaExporter.ExportType(view.DataType, schema);
                view.ExportChunk(0, array);
                Assert.True(column.Data.Handle.LeaseCount > 0, "the export holds the data");
                CConsumer.StringResult seen = CConsumer.ReadStrings(schema, array, column.Data.Pointer);
                Assert.Equal(large ? "U" : "u", seen.FormatText());
                Assert.Equal(1, seen.ZeroCopy);
                Assert.Equal(1, seen.Released);
                Assert.Equal(Rows, seen.Length);
                Assert.Equal(texts.Count(t => t is null), seen.NullCount);
                Assert.Equal(bytes, seen.Bytes);
                Assert.Equal(hash, seen.Hash.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
            finally
            {
                CArrowArray.Free(array);
                CArrowSchema.Free(schema);
            }
        }

        Assert.Equal(0, column.Data.Handle.LeaseCount);
    }

    private static NativeStringColumn BuildBinary(byte[]?[] blobs)
    {
        using var builder = new NativeStringColumnBuilder(isUtf8: false);
        foreach (byte[]? blob in blobs)
        {
            if (blob is null)
            {
                builder.AppendNull();
            }
            else
            {
                builder.Append(blob);
            }
        }

        return builder.Build();
    }
}
