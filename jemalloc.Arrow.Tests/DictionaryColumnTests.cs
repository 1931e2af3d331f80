using System.Text;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="NativeDictionaryColumn"/>s as Arrow dictionary arrays over their own index block, read by
/// Apache.Arrow, by Arrow for JavaScript through IPC and back through the C Data Interface; and Arrow
/// dictionary arrays (from Arrow for JavaScript) copied into native dictionary columns.
/// </summary>
public sealed class DictionaryColumnTests : IDisposable
{
    private const int Rows = 50_003;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-arrow-dictionary-" + Guid.NewGuid().ToString("N"));

    public DictionaryColumnTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private static string? Category(int i) => i % 5 == 0 ? null : i % 13 == 0 ? "" : $"kategorie-{i % 211}-日本";

    private static string?[] Categories(int rows) => [.. Enumerable.Range(0, rows).Select(Category)];

    private static string? ValueOf(DictionaryArray array, int row)
    {
        if (array.IsNull(row))
        {
            return null;
        }

        int index = ((Int32Array)array.Indices).GetValue(row)!.Value;
        return array.Dictionary switch
        {
            LargeStringArray large => large.GetString(index),
            StringArray small => small.GetString(index),
            _ => throw new InvalidOperationException(array.Dictionary.GetType().Name),
        };
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public unsafe void A_column_is_a_dictionary_array_over_its_own_indices(bool large)
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values);
        using (NativeArrowColumn view = column.ToArrow(largeOffsets: large))
        {
            var type = Assert.IsType<DictionaryType>(view.DataType);
            Assert.Equal(ArrowTypeId.Int32, type.IndexType.TypeId);
            Assert.Equal(large ? ArrowTypeId.LargeString : ArrowTypeId.String, type.ValueType.TypeId);
            Assert.Equal(1, view.ChunkCount);
            Assert.Equal(values.Count(v => v is null), view.NullCount);
            Assert.Equal(column.Indices.Pointer, view.GetValueAddress(0));
            var array = Assert.IsType<DictionaryArray>(view.Array);
            fixed (byte* indices = array.Data.Buffers[1].Span)
            {
                Assert.Equal(column.Indices.Pointer, (nint)indices);
            }

            Assert.Equal(column.Dictionary.Length, array.Dictionary.Length);
            for (int row = 0; row < Rows; row++)
            {
                Assert.Equal(values[row], ValueOf(array, row));
            }

            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.True(column.Indices.IsValid);
        }

        Assert.Equal(0, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
    }

    [Fact]
    public void Chunks_share_one_dictionary_and_cover_the_rows_in_order()
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values);
        using NativeArrowColumn view = column.ToArrow(maxChunkLength: 8_000);
        Assert.Equal((Rows + 7_999) / 8_000, view.ChunkCount);
        IArrowArray? first = null;
        int row = 0;
        for (int c = 0; c < view.ChunkCount; c++)
        {
            var chunk = (DictionaryArray)view.Chunks.ArrowArray(c);
            first ??= chunk.Dictionary;
            Assert.Same(first.Data, chunk.Dictionary.Data);
            for (int i = 0; i < chunk.Length; i++, row++)
            {
                Assert.Equal(values[row], ValueOf(chunk, i));
            }
        }

        Assert.Equal(Rows, row);
        Assert.Throws<ArgumentException>(() => column.ToArrow(maxChunkLength: 12));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.ToArrow(maxChunkLength: -8));
    }

    [Fact]
    public void A_column_of_no_rows_is_an_empty_dictionary_array()
    {
        using NativeDictionaryColumn column = TestColumns.Dictionary([]);
        using NativeArrowColumn view = column.ToArrow();
        Assert.Equal(0, view.Length);
        Assert.Equal(0, ((DictionaryArray)view.Array).Dictionary.Length);
    }

    [Fact]
    public void Indices_changed_to_name_no_value_are_refused_before_Arrow_sees_them_and_nothing_stays_held()
    {
        using NativeDictionaryColumn column = TestColumns.Dictionary(["a", "b", null, "a"]);
        column.Indices[1] = 2;
        var refused = Assert.Throws<ArgumentException>(() => column.ToArrow());
        Assert.Equal("column", refused.ParamName);
        Assert.Contains("Row 1", refused.Message);
        column.Indices[1] = -1;
        Assert.Throws<ArgumentException>(() => column.ToArrow());
        Assert.Equal(0, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Offsets.Handle.LeaseCount);

        // A null row's index is not read: anything goes.
        column.Indices[1] = 1;
        column.Indices[2] = 12345;
        using NativeArrowColumn view = column.ToArrow();
        Assert.Equal("b", ValueOf((DictionaryArray)view.Array, 1));
        Assert.Null(ValueOf((DictionaryArray)view.Array, 2));
    }

    [Fact]
    public void A_disposed_column_cannot_be_shown()
    {
        NativeDictionaryColumn column = TestColumns.Dictionary(["abc", null]);
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.ToArrow());
    }

    [Theory]
    [InlineData("file", true)]
    [InlineData("stream", false)]
    public void Node_reads_IPC_written_from_a_dictionary_column_value_by_value(string format, bool large)
    {
        string?[] values = Categories(Rows);
        string path = Path.Combine(_folder, $"dictionary.{format}.arrow");
        using (NativeDictionaryColumn column = TestColumns.Dictionary(values))
        using (NativeArrowColumn view = column.ToArrow(large))
        {
            var schema = new Schema.Builder().Field(f => f.Name("category").DataType(view.DataType).Nullable(true)).Build();
            var batch = new RecordBatch(schema, [view.Array], Rows);
            using FileStream stream = File.Create(path);
            using ArrowStreamWriter writer = format == "file" ? new ArrowFileWriter(stream, schema) : new ArrowStreamWriter(stream, schema);
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        NodeArrow.StringSummary node = NodeArrow.ReadStrings(path)["category"];
        (long bytes, string hash) = NodeArrow.StringSummary.Of(values.Select(v => v is null ? null : Encoding.UTF8.GetBytes(v)));
        Assert.Contains("Dictionary", node.Type, StringComparison.Ordinal);
        Assert.Equal(Rows, node.Length);
        Assert.Equal(values.Count(v => v is null), node.Nulls);
        Assert.Equal(bytes, node.Bytes);
        Assert.Equal(hash, node.Hash);
    }

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public async Task Dictionaries_Node_wrote_copy_into_native_dictionary_columns_value_by_value(string format)
    {
        string path = Path.Combine(_folder, $"node-dictionary.{format}.arrow");
        NodeArrow.RunScript("arrow-strings.js", "write-dict", path, format, Rows.ToString(System.Globalization.CultureInfo.InvariantCulture));
        var categories = new List<IArrowArray>();
        var codes = new List<IArrowArray>();
        await using (FileStream stream = File.OpenRead(path))
        {
            using ArrowStreamReader reader = format == "file" ? new ArrowFileReader(stream) : new ArrowStreamReader(stream);
            while (await reader.ReadNextRecordBatchAsync() is RecordBatch batch)
            {
                categories.Add(batch.Column("category"));
                codes.Add(batch.Column("code"));
            }
        }

        Assert.True(format == "file" || categories.Count > 1, "a stream of several batches, each with its own dictionary");
        using NativeDictionaryColumn category = new ChunkedArray(categories).ToNativeDictionaryColumn(AllocationOptions.Default);
        using NativeDictionaryColumn code = new ChunkedArray(codes).ToNativeDictionaryColumn(AllocationOptions.WithHugePages);
        Assert.Equal(Rows, category.Length);
        // i % 301 is a multiple of 7 exactly when i is (301 = 7 * 43): those 43 values are never written.
        Assert.Equal(301 - 43, category.Dictionary.Length);
        Assert.Equal(12, code.Dictionary.Length);
        Assert.Equal(Enumerable.Range(0, Rows).Count(i => i % 7 == 0), category.NullCount);
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(i % 7 == 0 ? null : $"cat-{i % 301}-é", category.GetString(i));
            Assert.Equal(i % 3 == 0 ? "" : $"c{i % 11}", code.GetString(i));
        }
    }

    [Fact]
    public unsafe void An_export_through_the_C_Data_Interface_outlives_the_view_and_imports_as_the_same_dictionary_array()
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values);
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            using (NativeArrowColumn view = column.ToArrow(largeOffsets: false))
            {
                CArrowSchemaExporter.ExportType(view.DataType, schema);
                view.ExportChunk(0, array);
            }

            // The view is gone; the export's pins still hold the indices and the dictionary.
            Assert.True(column.Indices.Handle.LeaseCount > 0, "the export holds the indices");
            Assert.True(column.Dictionary.Data.Handle.LeaseCount > 0, "the export holds the dictionary");
            Assert.Throws<InvalidOperationException>(column.Dispose);
            IArrowType type = CArrowSchemaImporter.ImportType(schema);
            using (IArrowArray imported = CArrowArrayImporter.ImportArray(array, type))
            {
                var dictionary = Assert.IsType<DictionaryArray>(imported);
                fixed (byte* indices = dictionary.Data.Buffers[1].Span)
                {
                    Assert.Equal(column.Indices.Pointer, (nint)indices);
                }

                for (int row = 0; row < Rows; row++)
                {
                    Assert.Equal(values[row], ValueOf(dictionary, row));
                }

                using NativeDictionaryColumn back = imported.ToNativeDictionaryColumn(AllocationOptions.Default);
                for (int row = 0; row < Rows; row += 3)
                {
                    Assert.Equal(values[row], back.GetString(row));
                }
            }
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }

        // The import was released: nothing holds the column any more.
        Assert.Equal(0, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
    }

    [Fact]
    public void An_array_that_is_not_a_dictionary_of_strings_or_names_no_value_is_refused()
    {
        using NativeStringColumn plain = new NativeStringColumnBuilder().Build();
        using (NativeArrowColumn view = plain.ToArrow())
        {
            Assert.Equal("column", Assert.Throws<ArgumentException>(() => view.Chunks.ToNativeDictionaryColumn(AllocationOptions.Default)).ParamName);
        }

        var dictionary = new StringArray.Builder().Append("a").Append("b").Build();
        var indices = new Int32Array.Builder().Append(0).Append(2).Build();
        var forged = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), indices, dictionary);
        var refused = Assert.Throws<ArgumentException>(() => forged.ToNativeDictionaryColumn(AllocationOptions.Default));
        Assert.Contains("index 2", refused.Message);

        var negative = new DictionaryArray(new DictionaryType(Int8Type.Default, StringType.Default, false), new Int8Array.Builder().Append(-1).Build(), dictionary);
        Assert.Contains("index -1", Assert.Throws<ArgumentException>(() => negative.ToNativeDictionaryColumn(AllocationOptions.Default)).Message);

        var numbers = new Int32Array.Builder().Append(1).Build();
        var ofNumbers = new DictionaryArray(new DictionaryType(Int32Type.Default, Int32Type.Default, false), new Int32Array.Builder().Append(0).Build(), numbers);
        Assert.Contains("int32", Assert.Throws<ArgumentException>(() => ofNumbers.ToNativeDictionaryColumn(AllocationOptions.Default)).Message);

        // A row naming a null dictionary value is null.
        var withNull = new StringArray.Builder().Append("a").AppendNull().Build();
        var pointsAtNull = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), new Int32Array.Builder().Append(1).Append(0).Build(), withNull);
        using NativeDictionaryColumn read = pointsAtNull.ToNativeDictionaryColumn(AllocationOptions.Default);
        Assert.Null(read.GetString(0));
        Assert.Equal("a", read.GetString(1));
    }
}
