using Apache.Arrow;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="ArrowIpcReader"/> and <see cref="ArrowIpcWriter"/> against Apache Arrow for .NET: IPC
/// written from native columns read by its <see cref="ArrowFileReader"/> and <see cref="ArrowStreamReader"/>
/// value by value, and IPC it wrote with columns the reader refuses (nested, compressed), whose
/// neighbours are still read, and a dictionary-encoded column, read as one.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcApacheArrowTests
{
    [Theory]
    [InlineData(ArrowIpcFormat.File, 1L << 20)]
    [InlineData(ArrowIpcFormat.Stream, 1L << 20)]
    [InlineData(ArrowIpcFormat.File, 4096)]
    [InlineData(ArrowIpcFormat.Stream, 1000)]
    public async Task Apache_Arrow_for_NET_reads_IPC_written_from_native_columns_value_by_value(ArrowIpcFormat format, long batchSize)
    {
        const long rows = 10_007;
        using var ids = new HugeArray<long>(rows);
        using var prices = new HugeArray<float>(rows);
        using var priceValid = new HugeArray<byte>((rows + 7) / 8);
        using var flags = new HugeArray<bool>(rows);
        using var small = new SafeArray<ushort>((int)rows);
        using var stamps = new HugeArray<long>(rows);
        using var times = new HugeArray<int>(rows);
        for (long r = 0; r < rows; r++)
        {
            ids[r] = (r * 7919) - 40_000;
            prices[r] = r * 0.5f;
            if (r % 4 != 1)
            {
                priceValid[r >> 3] |= (byte)(1 << (int)(r & 7));
            }

            flags[r] = r % 5 == 0;
            small[(int)r] = (ushort)(r * 3);
            stamps[r] = 1_700_000_000_000 + r;
            times[r] = (int)(r % 86_400);
        }

        var stream = new MemoryStream();
        new ArrowIpcWriter { BatchSize = batchSize }
            .Add("id", ids)
            .Add("price", prices, priceValid)
            .Add("flag", flags)
            .Add("small", small)
            .AddTimestamp("ts", stamps, TimeUnit.Millisecond, "UTC")
            .AddTime("t", times, TimeUnit.Second)
            .Write(stream, format);
        stream.Position = 0;

        using ArrowStreamReader reader = format == ArrowIpcFormat.File ? new ArrowFileReader(stream) : new ArrowStreamReader(stream);
        long row = 0;
        int batches = 0;
        while (await reader.ReadNextRecordBatchAsync() is RecordBatch batch)
        {
            using (batch)
            {
                batches++;
                Assert.Equal(Math.Min(batchSize, rows - row), batch.Length);
                var id = (Int64Array)batch.Column("id");
                var price = (FloatArray)batch.Column("price");
                var flag = (BooleanArray)batch.Column("flag");
                var smallColumn = (UInt16Array)batch.Column("small");
                var ts = (TimestampArray)batch.Column("ts");
                var t = (Time32Array)batch.Column("t");
                Assert.Equal("UTC", ((TimestampType)ts.Data.DataType).Timezone);
                Assert.Equal(TimeUnit.Second, ((Time32Type)t.Data.DataType).Unit);
                for (int i = 0; i < batch.Length; i++, row++)
                {
                    Assert.Equal(ids[row], id.GetValue(i));
                    Assert.Equal(row % 4 == 1 ? null : prices[row], price.GetValue(i));
                    Assert.Equal(flags[row], flag.GetValue(i));
                    Assert.Equal(small[(int)row], smallColumn.GetValue(i));
                    Assert.Equal(stamps[row], ts.GetValue(i));
                    Assert.Equal(times[row], t.GetValue(i));
                }
            }
        }

        Assert.Equal(rows, row);
        Assert.Equal((rows + batchSize - 1) / batchSize, batches);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Nested_columns_are_refused_by_name_the_dictionary_column_is_read_as_one_and_the_columns_after_them_are_read(ArrowIpcFormat format)
    {
        MemoryStream stream = WriteWithApacheArrow(format, compressed: false);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream))
        {
            Assert.Equal(format, reader.Format);
            Assert.Equal(["list", "dict", "pair", "name", "after"], reader.Fields.Select(f => f.Name));
            Assert.Equal("List", reader.Fields[0].TypeName);
            Assert.True(reader.Fields[1].IsDictionaryEncoded);
            Assert.Equal("dict: Dictionary<Utf8>, nullable", reader.Fields[1].ToString());
            Assert.Equal(ArrowIpcType.Other, reader.Fields[2].Type);

            NotSupportedException list = Assert.Throws<NotSupportedException>(() => reader.ReadColumn<int>("list"));
            Assert.Contains("'list'", list.Message, StringComparison.Ordinal);
            Assert.Contains("List", list.Message, StringComparison.Ordinal);
            ArgumentException dict = Assert.Throws<ArgumentException>(() => reader.ReadColumn<int>("dict"));
            Assert.Contains("'dict' is dictionary-encoded (Utf8 values), which ReadColumn<Int32> does not read: read it with ReadDictionaryColumn", dict.Message, StringComparison.Ordinal);
            using (NativeDictionaryColumn encoded = reader.ReadDictionaryColumn("dict"))
            {
                Assert.Equal(["a", "b", "a", "b", "b", "a"], Enumerable.Range(0, 6).Select(r => encoded.GetString(r)));
                Assert.Equal(2, encoded.Dictionary.Length);
            }

            NotSupportedException pair = Assert.Throws<NotSupportedException>(() => reader.ReadColumn<int>("pair"));
            Assert.Contains("Struct", pair.Message, StringComparison.Ordinal);

            // After a list (2 nodes, 4 buffers), a dictionary (1 node, 2 buffers), a struct of two
            // (3 nodes, 5 buffers) and a string column (3 buffers): the column's own buffers.
            using HugeArray<long> after = reader.ReadColumn<long>("after");
            Assert.Equal(Enumerable.Range(0, 6).Select(i => i * 1000L), after);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_column_read_with_a_method_that_does_not_take_its_type_is_ArgumentException_naming_the_one_that_does_and_a_type_no_read_takes_NotSupportedException()
    {
        MemoryStream stream = WriteWithApacheArrow(ArrowIpcFormat.File, compressed: false);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream))
        {
            // An Int64 column: the Parquet reader's convention (docs/columnar.md, Errors).
            Func<object>[] wrongForInt64 =
            [
                () => reader.ReadDecimalColumn("after"),
                () => reader.ReadFixedSizeBinaryColumn("after"),
                () => reader.ReadStringColumn("after"),
                () => reader.ReadDictionaryColumn("after"),
                () => reader.ReadColumn<int>("after"),
            ];
            foreach (Func<object> read in wrongForInt64)
            {
                ArgumentException e = Assert.Throws<ArgumentException>(() => read());
                Assert.Equal("column", e.ParamName);
                Assert.Contains("'after'", e.Message, StringComparison.Ordinal);
                Assert.Contains("Int64", e.Message, StringComparison.Ordinal);
            }

            foreach (Func<object> read in wrongForInt64[..4])
            {
                Assert.Contains("read it with ReadColumn<Int64>", Assert.Throws<ArgumentException>(() => read()).Message, StringComparison.Ordinal);
            }

            // A utf8 string column and a dictionary of strings: the read that takes each is named.
            Assert.Contains("read it with ReadStringColumn", Assert.Throws<ArgumentException>(() => reader.ReadDecimalColumn("name")).Message, StringComparison.Ordinal);
            Assert.Contains("read it with ReadDictionaryColumn", Assert.Throws<ArgumentException>(() => reader.ReadFixedSizeBinaryColumn("dict")).Message, StringComparison.Ordinal);

            // A list and a struct: no read takes them, whichever is tried.
            foreach (string nested in new[] { "list", "pair" })
            {
                Func<object>[] reads =
                [
                    () => reader.ReadColumn<long>(nested),
                    () => reader.ReadStringColumn(nested),
                    () => reader.ReadDecimalColumn(nested),
                    () => reader.ReadFixedSizeBinaryColumn(nested),
                    () => reader.ReadDictionaryColumn(nested),
                ];
                foreach (Func<object> read in reads)
                {
                    NotSupportedException e = Assert.Throws<NotSupportedException>(() => read());
                    Assert.Contains($"'{nested}'", e.Message, StringComparison.Ordinal);
                    Assert.Contains("a type the reader does not read", e.Message, StringComparison.Ordinal);
                }
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_compressed_body_is_refused_naming_the_column_and_the_codec()
    {
        MemoryStream stream = WriteWithApacheArrow(ArrowIpcFormat.File, compressed: true);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream))
        {
            NotSupportedException e = Assert.Throws<NotSupportedException>(() => reader.ReadColumn<long>("after"));
            Assert.Contains("'after'", e.Message, StringComparison.Ordinal);
            Assert.Contains("LZ4_FRAME", e.Message, StringComparison.Ordinal);

            // The dictionary batch is compressed too.
            NotSupportedException dict = Assert.Throws<NotSupportedException>(() => reader.ReadDictionaryColumn("dict"));
            Assert.Contains("'dict", dict.Message, StringComparison.Ordinal);
            Assert.Contains("LZ4_FRAME", dict.Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    private static MemoryStream WriteWithApacheArrow(ArrowIpcFormat format, bool compressed)
    {
        const int rows = 6;
        var listBuilder = new ListArray.Builder(Int32Type.Default);
        var listValues = (Int32Array.Builder)listBuilder.ValueBuilder;
        for (int i = 0; i < rows; i++)
        {
            listBuilder.Append();
            listValues.Append(i).Append(i + 1);
        }

        var dictionaryType = new DictionaryType(Int32Type.Default, StringType.Default, false);
        var dictionary = new DictionaryArray(
            dictionaryType,
            new Int32Array.Builder().AppendRange([0, 1, 0, 1, 1, 0]).Build(),
            new StringArray.Builder().Append("a").Append("b").Build());
        var pairType = new StructType([new Field("x", Int32Type.Default, false), new Field("y", DoubleType.Default, false)]);
        var pair = new StructArray(
            pairType,
            rows,
            [new Int32Array.Builder().AppendRange(Enumerable.Range(0, rows)).Build(), new DoubleArray.Builder().AppendRange(Enumerable.Range(0, rows).Select(i => i * 0.5)).Build()],
            ArrowBuffer.Empty);
        var names = new StringArray.Builder().AppendRange(Enumerable.Range(0, rows).Select(i => "n" + i)).Build();
        var after = new Int64Array.Builder().AppendRange(Enumerable.Range(0, rows).Select(i => i * 1000L)).Build();
        var schema = new Schema.Builder()
            .Field(f => f.Name("list").DataType(new ListType(Int32Type.Default)).Nullable(true))
            .Field(f => f.Name("dict").DataType(dictionaryType).Nullable(true))
            .Field(f => f.Name("pair").DataType(pairType).Nullable(true))
            .Field(f => f.Name("name").DataType(StringType.Default).Nullable(true))
            .Field(f => f.Name("after").DataType(Int64Type.Default).Nullable(false))
            .Build();
        var options = compressed
            ? new IpcOptions { CompressionCodec = CompressionCodecType.Lz4Frame, CompressionCodecFactory = new CopyingCodecFactory() }
            : new IpcOptions();
        var stream = new MemoryStream();
        using (var batch = new RecordBatch(schema, [listBuilder.Build(), dictionary, pair, names, after], rows))
        using (ArrowStreamWriter writer = format == ArrowIpcFormat.File ? new ArrowFileWriter(stream, schema, leaveOpen: true, options) : new ArrowStreamWriter(stream, schema, leaveOpen: true, options))
        {
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        stream.Position = 0;
        return stream;
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void A_name_two_columns_share_is_refused_and_the_other_columns_are_read(ArrowIpcFormat format)
    {
        // Arrow (and Apache.Arrow's writer) allow it; a read by that name would have to pick one.
        var schema = new Schema.Builder()
            .Field(f => f.Name("v").DataType(Int64Type.Default).Nullable(false))
            .Field(f => f.Name("w").DataType(Int64Type.Default).Nullable(false))
            .Field(f => f.Name("v").DataType(Int64Type.Default).Nullable(false))
            .Build();
        var stream = new MemoryStream();
        using (var batch = new RecordBatch(schema, [new Int64Array.Builder().AppendRange([1, 2]).Build(), new Int64Array.Builder().AppendRange([3, 4]).Build(), new Int64Array.Builder().AppendRange([5, 6]).Build()], 2))
        using (ArrowStreamWriter writer = format == ArrowIpcFormat.File ? new ArrowFileWriter(stream, schema, leaveOpen: true) : new ArrowStreamWriter(stream, schema, leaveOpen: true))
        {
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        stream.Position = 0;
        using var reader = new ArrowIpcReader(stream, format);
        ArgumentException index = Assert.Throws<ArgumentException>(() => reader.GetColumnIndex("v"));
        Assert.Equal("column", index.ParamName);
        Assert.Contains("2 columns named 'v' (at positions 0, 2)", index.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("v"));
        Assert.Equal(1, reader.GetColumnIndex("w"));
        using HugeArray<long> w = reader.ReadColumn<long>("w");
        Assert.Equal([3L, 4L], w.ToArray());
    }

    // A stand-in codec: the buffers are stored as they are, under the LZ4_FRAME flag, which is all
    // the reader needs to see to refuse them.
    private sealed class CopyingCodecFactory : ICompressionCodecFactory
    {
        public ICompressionCodec CreateCodec(CompressionCodecType compressionCodecType) => new CopyingCodec();

        public ICompressionCodec CreateCodec(CompressionCodecType compressionCodecType, int? compressionLevel) => new CopyingCodec();
    }

    private sealed class CopyingCodec : ICompressionCodec
    {
        public int Decompress(ReadOnlyMemory<byte> source, Memory<byte> destination)
        {
            source.CopyTo(destination);
            return source.Length;
        }

        public void Compress(ReadOnlyMemory<byte> source, Stream destination) => destination.Write(source.Span);

        public void Dispose()
        {
        }
    }
}
