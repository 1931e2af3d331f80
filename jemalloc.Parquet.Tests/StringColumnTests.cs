using System.Data.Common;
using Encoding = ParquetSharp.Encoding;
using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// BYTE_ARRAY columns (strings and binary) read into <see cref="NativeStringColumn"/>s and written from
/// them, checked against DuckDB's reading and writing and ParquetSharp's own writer in every BYTE_ARRAY
/// encoding, and against the ledger (nothing left behind, also when a read fails).
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class StringColumnTests : IDisposable
{
    private const int Rows = 30_000;
    private readonly TempFolder _folder = new();
    private readonly long _live = AllocationLedger.LiveCount;

    public void Dispose()
    {
        _folder.Dispose();
        Assert.Equal(_live, AllocationLedger.LiveCount);
    }

    // Short categories (a few hundred distinct), free text of 0-300 bytes with non-ASCII, and nulls.
    private static string? Category(int i) => i % 11 == 0 ? null : $"cat-{i % 357}";

    private static string? FreeText(int i) => i % 13 == 0 ? null : string.Concat(Enumerable.Repeat($"é{i}ü日", i % 37)) + (i % 5 == 0 ? "😀" : "");

    [Theory]
    [InlineData("zstd", "V1")]
    [InlineData("snappy", "V2")]
    [InlineData("gzip", "V1")]
    [InlineData("uncompressed", "V2")]
    public void Strings_DuckDB_wrote_read_value_by_value_as_DuckDB_reads_them(string codec, string version)
    {
        string path = _folder.File($"duck-{codec}-{version}.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT
                    i::BIGINT AS id,
                    CASE WHEN i % 11 = 0 THEN NULL ELSE 'cat-' || (i % 357) END AS category,
                    CASE WHEN i % 13 = 0 THEN NULL ELSE repeat('é' || i || 'ü日', (i % 37)::INTEGER) || CASE WHEN i % 5 = 0 THEN '😀' ELSE '' END END AS text,
                    md5(i::VARCHAR) AS unique_text,
                    CASE WHEN i % 7 = 0 THEN NULL ELSE ('\x00\xFF' || (i % 256)::VARCHAR)::BLOB END AS payload
                  FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION {codec}, PARQUET_VERSION {version})
            """);

        using var reader = new NativeParquetReader(path);
        using NativeStringColumn category = reader.ReadStringColumn("category");
        using NativeStringColumn text = reader.ReadStringColumn("text");
        using NativeStringColumn unique = reader.ReadStringColumn("unique_text", AllocationOptions.WithHugePages);
        using NativeStringColumn payload = reader.ReadStringColumn("payload");
        Assert.True(category.IsUtf8 && text.IsUtf8 && unique.IsUtf8);
        Assert.False(payload.IsUtf8);
        Assert.Null(unique.Validity);

        long rows = duck.Query(
            $"SELECT file_row_number, category, text, unique_text, payload FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            r =>
            {
                long row = r.GetInt64(0);
                Assert.Equal(NullableString(r, 1), category.GetString(row));
                Assert.Equal(NullableString(r, 2), text.GetString(row));
                Assert.Equal(r.GetString(3), unique.GetString(row));
                Assert.Equal(NullableBytes(r, 4), payload.GetBytes(row));
            });
        Assert.Equal(Rows, rows);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) - count(category) FROM '{path}'"), category.NullCount);
        Assert.Equal(duck.Scalar<long>($"SELECT sum(strlen(text))::BIGINT FROM '{path}'"), text.ByteCount);
    }

    [Theory]
    [InlineData(Encoding.Plain, false, ParquetDataPageVersion.V1)]
    [InlineData(Encoding.Plain, true, ParquetDataPageVersion.V2)]
    [InlineData(Encoding.DeltaLengthByteArray, false, ParquetDataPageVersion.V1)]
    [InlineData(Encoding.DeltaLengthByteArray, false, ParquetDataPageVersion.V2)]
    [InlineData(Encoding.DeltaByteArray, false, ParquetDataPageVersion.V1)]
    [InlineData(Encoding.DeltaByteArray, false, ParquetDataPageVersion.V2)]
    public void Strings_ParquetSharp_wrote_in_each_encoding_read_back_and_DuckDB_agrees(Encoding encoding, bool dictionary, ParquetDataPageVersion pages)
    {
        string path = _folder.File($"sharp-{encoding}-{dictionary}-{pages}.parquet");
        string?[] categories = Enumerable.Range(0, Rows).Select(Category).ToArray();
        string?[] texts = Enumerable.Range(0, Rows).Select(FreeText).ToArray();
        using (var builder = new WriterPropertiesBuilder())
        {
            builder.Compression(Compression.Zstd).DataPageVersion(pages).DataPagesize(16 * 1024);
            if (dictionary)
            {
                builder.EnableDictionary("category").EnableDictionary("text");
            }
            else
            {
                builder.DisableDictionary("category").DisableDictionary("text");
            }
            if (encoding != Encoding.Plain)
            {
                builder.Encoding("category", encoding).Encoding("text", encoding);
            }

            using WriterProperties properties = builder.MaxRowGroupLength(7000).Build();
            var columns = new Column[] { new Column<string>("category", LogicalType.String()), new Column<string>("text", LogicalType.String()) };
            using var file = new ParquetFileWriter(path, columns, properties);
            for (int start = 0; start < Rows; start += 7000)
            {
                int count = Math.Min(7000, Rows - start);
                using RowGroupWriter group = file.AppendRowGroup();
                using (var writer = group.NextColumn().LogicalWriter<string?>())
                {
                    writer.WriteBatch(categories.AsSpan(start, count));
                }

                using (var writer = group.NextColumn().LogicalWriter<string?>())
                {
                    writer.WriteBatch(texts.AsSpan(start, count));
                }
            }

            file.Close();
        }

        using (var metadata = new ParquetFileReader(path))
        {
            using RowGroupReader group = metadata.RowGroup(0);
            using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(1);
            Assert.Contains(dictionary ? Encoding.RleDictionary : encoding, chunk.Encodings);
        }

        using var reader = new NativeParquetReader(path);
        using NativeStringColumn category = reader.ReadStringColumn("category");
        using NativeStringColumn text = reader.ReadStringColumn("text");
        for (int row = 0; row < Rows; row++)
        {
            Assert.Equal(categories[row], category.GetString(row));
            Assert.Equal(texts[row], text.GetString(row));
        }

        using var duck = new DuckDb();
        Assert.Equal(texts.Sum(t => t is null ? 0L : System.Text.Encoding.UTF8.GetByteCount(t)), duck.Scalar<long>($"SELECT sum(strlen(text))::BIGINT FROM '{path}'"));
        Assert.Equal(text.ByteCount, duck.Scalar<long>($"SELECT sum(strlen(text))::BIGINT FROM '{path}'"));
    }

    [Theory]
    [InlineData("zstd")]
    [InlineData("snappy")]
    public void A_written_string_column_reads_back_in_DuckDB_and_here(string codec)
    {
        string path = _folder.File($"native-{codec}.parquet");
        string?[] texts = Enumerable.Range(0, Rows).Select(FreeText).ToArray();
        using (var builder = new NativeStringColumnBuilder())
        using (var blobs = new NativeStringColumnBuilder(isUtf8: false))
        {
            foreach (string? t in texts)
            {
                builder.Append(t);
            }

            for (int i = 0; i < Rows; i++)
            {
                blobs.Append(BitConverter.GetBytes(i * 7919L));
            }

            using NativeStringColumn column = builder.Build();
            using NativeStringColumn binary = blobs.Build();
            new NativeParquetWriter { Compression = codec == "zstd" ? Compression.Zstd : Compression.Snappy, RowGroupSize = 9000 }
                .Add("text", column)
                .Add("blob", binary)
                .Write(path);
        }

        using var duck = new DuckDb();
        Assert.Equal("VARCHAR", duck.Scalar<string>($"SELECT typeof(text) FROM '{path}' LIMIT 1"));
        Assert.Equal("BLOB", duck.Scalar<string>($"SELECT typeof(blob) FROM '{path}' LIMIT 1"));
        Assert.Equal(texts.Count(t => t is null), duck.Scalar<long>($"SELECT count(*) - count(text) FROM '{path}'"));
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) - count(blob) FROM '{path}'"));
        duck.Query($"SELECT file_row_number, text, blob FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number", r =>
        {
            long row = r.GetInt64(0);
            Assert.Equal(texts[row], NullableString(r, 1));
            Assert.Equal(BitConverter.GetBytes(row * 7919L), NullableBytes(r, 2));
        });

        using var reader = new NativeParquetReader(path);
        using NativeStringColumn back = reader.ReadStringColumn("text");
        Assert.True(reader.IsNullable("text"));
        Assert.False(reader.IsNullable("blob"));
        for (int row = 0; row < Rows; row++)
        {
            Assert.Equal(texts[row], back.GetString(row));
        }
    }

    [Fact]
    public void A_file_without_rows_gives_an_empty_column()
    {
        string path = _folder.File("empty.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT 'x' AS s, 1::BIGINT AS n FROM range(0)) TO '{path}' (FORMAT parquet)");
        using var reader = new NativeParquetReader(path);
        Assert.Equal(0, reader.RowCount);
        using NativeStringColumn column = reader.ReadStringColumn("s");
        Assert.Equal(0, column.Length);
        Assert.Equal(0, column.ByteCount);

        string written = _folder.File("empty-written.parquet");
        using (var builder = new NativeStringColumnBuilder())
        using (NativeStringColumn none = builder.Build())
        {
            new NativeParquetWriter().Add("s", none).Write(written);
        }

        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM '{written}'"));
    }

    [Fact]
    public void A_column_that_is_not_strings_is_refused_naming_it_and_its_type()
    {
        string path = _folder.File("numbers.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT i::BIGINT AS n, (i / 100)::DECIMAL(38, 2) AS amount, ['a'] AS list FROM range(10) r(i)) TO '{path}' (FORMAT parquet)");
        using var reader = new NativeParquetReader(path);
        var number = Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("n"));
        Assert.Equal("column", number.ParamName);
        Assert.Contains("'n'", number.Message);
        Assert.Contains("Int64", number.Message);
        var amount = Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("amount"));
        Assert.Contains("'amount'", amount.Message);
        Assert.Contains("FixedLenByteArray", amount.Message);
        Assert.Contains("Decimal(precision=38, scale=2)", amount.Message);
        Assert.Throws<NotSupportedException>(() => reader.ReadStringColumn("list.list.element"));
        Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("missing"));
        Assert.Throws<ArgumentNullException>(() => reader.ReadStringColumn(null!));
        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadStringColumn("n"));
    }

    [Fact]
    public void A_decimal_stored_as_byte_array_is_refused_with_the_reader_that_reads_it()
    {
        string path = _folder.File("decimal-bytes.parquet");
        using (LogicalType decimalType = LogicalType.Decimal(10, 2))
        using (var node = new ParquetSharp.Schema.PrimitiveNode("amount", Repetition.Required, decimalType, PhysicalType.ByteArray))
        using (var schema = new ParquetSharp.Schema.GroupNode("schema", Repetition.Required, [node]))
        using (var builder = new WriterPropertiesBuilder())
        using (WriterProperties properties = builder.Build())
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using var writer = (ColumnWriter<ByteArray>)group.NextColumn();
            writer.WriteBatch([]);
            file.Close();
        }

        using var reader = new NativeParquetReader(path);
        var refused = Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("amount"));
        Assert.Contains("ReadDecimalColumn", refused.Message);
        Assert.Contains("'amount'", refused.Message);
    }

    [Fact]
    public void A_footer_that_declares_more_rows_than_the_pages_hold_is_an_error_and_frees_what_was_read()
    {
        string path = _folder.File("forged.parquet");
        using (var builder = new NativeStringColumnBuilder())
        {
            for (int i = 0; i < 1000; i++)
            {
                builder.Append($"value {i}");
            }

            using NativeStringColumn column = builder.Build();
            new NativeParquetWriter { RowGroupSize = 500 }.Add("s", column).Write(path);
        }

        // Consistent counts (the file 1,200 rows, each group 600) over pages that hold 500 per group.
        Assert.Equal(1, ParquetFooter.RewriteCounts(path, 1000, 1200));
        Assert.True(ParquetFooter.RewriteCounts(path, 500, 600) >= 2);
        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        Assert.Throws<InvalidDataException>(() => reader.ReadStringColumn("s"));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void The_writer_holds_the_columns_arrays_and_refuses_offsets_changed_to_leave_the_block()
    {
        string path = _folder.File("changed.parquet");
        using var builder = new NativeStringColumnBuilder();
        builder.Append("abc");
        builder.Append("def");
        using NativeStringColumn column = builder.Build();
        var writer = new NativeParquetWriter().Add("s", column);
        column.Offsets[2] = 1L << 40;
        var refused = Assert.Throws<InvalidDataException>(() => writer.Write(path));
        Assert.Contains("row 1", refused.Message);
        Assert.False(File.Exists(path));
        column.Offsets[2] = 6;
        writer.Write(path);
        using var reader = new NativeParquetReader(path);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        Assert.Equal("def", back.GetString(1));
        Assert.Equal(0, column.Data.Handle.LeaseCount);
    }

    private static string? NullableString(DbDataReader reader, int ordinal) => reader.IsDBNull(ordinal) ? null : reader.GetString(ordinal);

    private static byte[]? NullableBytes(DbDataReader reader, int ordinal)
    {
        if (reader.IsDBNull(ordinal))
        {
            return null;
        }

        using Stream stream = reader.GetStream(ordinal);
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }
}
