using System.Data.Common;
using ParquetSharp;
using Encoding = ParquetSharp.Encoding;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// BYTE_ARRAY columns read into <see cref="NativeDictionaryColumn"/>s, checked value by value against
/// DuckDB's reading of the same files (nulls, empty strings, several row groups, chunks whose dictionary
/// page overflowed into plain pages, no rows), and against the ledger (nothing left behind).
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class DictionaryColumnTests : IDisposable
{
    private const int Rows = 30_000;
    private readonly TempFolder _folder = new();
    private readonly long _live = AllocationLedger.LiveCount;

    public void Dispose()
    {
        _folder.Dispose();
        Assert.Equal(_live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData("zstd", "V1")]
    [InlineData("snappy", "V2")]
    public void A_dictionary_column_DuckDB_wrote_reads_as_DuckDB_reads_it(string codec, string version)
    {
        string path = _folder.File($"duck-{codec}-{version}.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT
                    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 17 = 0 THEN '' ELSE 'cat-' || (i % 357) || 'é' END AS category,
                    CASE WHEN i % 7 = 0 THEN NULL ELSE ('\x00\xFF' || (i % 5)::VARCHAR)::BLOB END AS payload,
                    md5(i::VARCHAR) AS unique_text
                  FROM range({Rows}) r(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION {codec}, PARQUET_VERSION {version})
            """);
        Assert.True(duck.Scalar<long>($"SELECT count(DISTINCT row_group_id) FROM parquet_metadata('{path}')") > 1);

        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn category = reader.ReadDictionaryColumn("category");
        using NativeDictionaryColumn payload = reader.ReadDictionaryColumn("payload", AllocationOptions.WithHugePages);
        using NativeDictionaryColumn unique = reader.ReadDictionaryColumn("unique_text");
        Assert.True(category.IsUtf8);
        Assert.False(payload.IsUtf8);
        Assert.Null(unique.Validity);
        Assert.Equal(duck.Scalar<long>($"SELECT count(DISTINCT category) FROM '{path}'"), category.Dictionary.Length);
        Assert.Equal(duck.Scalar<long>($"SELECT count(DISTINCT payload) FROM '{path}'"), payload.Dictionary.Length);
        Assert.Equal(Rows, unique.Dictionary.Length);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) - count(category) FROM '{path}'"), category.NullCount);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE category = ''"), Enumerable.Range(0, Rows).Count(row => category.ValueEquals(row, ""u8)));

        long rows = duck.Query(
            $"SELECT file_row_number, category, payload, unique_text FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number",
            r =>
            {
                long row = r.GetInt64(0);
                Assert.Equal(NullableString(r, 1), category.GetString(row));
                Assert.Equal(NullableBytes(r, 2), payload.GetBytes(row));
                Assert.Equal(r.GetString(3), unique.GetString(row));
            });
        Assert.Equal(Rows, rows);
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE starts_with(category, 'cat-3')"), category.CountStartsWith("cat-3"u8));
    }

    [Fact]
    public void A_chunk_whose_dictionary_page_overflowed_into_plain_pages_reads_as_DuckDB_reads_it()
    {
        string path = _folder.File("fallback.parquet");
        // Few distinct values first, then many: the writer's dictionary page fills and the rest of each chunk is plain.
        string?[] values = [.. Enumerable.Range(0, Rows).Select(i => i % 19 == 0 ? null : i < Rows / 3 ? $"early-{i % 50}" : $"late-{i}-{new string('x', i % 40)}")];
        using (var builder = new WriterPropertiesBuilder())
        {
            using WriterProperties properties = builder.Compression(Compression.Zstd).EnableDictionary().DictionaryPagesizeLimit(4096).DataPagesize(4096).MaxRowGroupLength(12_000).Build();
            var columns = new Column[] { new Column<string>("s", LogicalType.String()) };
            using var file = new ParquetFileWriter(path, columns, properties);
            for (int start = 0; start < Rows; start += 12_000)
            {
                int count = Math.Min(12_000, Rows - start);
                using RowGroupWriter group = file.AppendRowGroup();
                using var writer = group.NextColumn().LogicalWriter<string?>();
                writer.WriteBatch(values.AsSpan(start, count));
            }

            file.Close();
        }

        using (var metadata = new ParquetFileReader(path))
        {
            using RowGroupReader group = metadata.RowGroup(1);
            using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(0);
            Assert.Contains(Encoding.Plain, chunk.Encodings);
            Assert.Contains(Encoding.RleDictionary, chunk.Encodings);
        }

        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("s");
        Assert.Equal(values.Where(v => v is not null).Distinct().Count(), column.Dictionary.Length);
        using var duck = new DuckDb();
        long rows = duck.Query($"SELECT file_row_number, s FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number", r =>
        {
            long row = r.GetInt64(0);
            Assert.Equal(NullableString(r, 1), column.GetString(row));
            Assert.Equal(values[row], column.GetString(row));
        });
        Assert.Equal(Rows, rows);
    }

    [Fact]
    public void A_file_without_rows_gives_an_empty_dictionary_column()
    {
        string path = _folder.File("empty.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT 'x' AS s, 1::BIGINT AS n FROM range(0)) TO '{path}' (FORMAT parquet)");
        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("s");
        Assert.Equal(0, column.Length);
        Assert.Equal(0, column.Dictionary.Length);
        Assert.Equal(-1, column.IndexOf("x"u8));
    }

    [Fact]
    public void A_column_that_is_not_strings_or_not_there_is_refused_naming_it_and_nothing_is_left()
    {
        string path = _folder.File("types.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT i::BIGINT AS n, 'v' || i AS s FROM range(100) r(i)) TO '{path}' (FORMAT parquet)");
        var reader = new NativeParquetReader(path);
        var wrongType = Assert.Throws<ArgumentException>(() => reader.ReadDictionaryColumn("n"));
        Assert.Contains("'n'", wrongType.Message);
        var missing = Assert.Throws<ArgumentException>(() => reader.ReadDictionaryColumn("nothing"));
        Assert.Contains("nothing", missing.Message);
        Assert.Throws<ArgumentNullException>(() => reader.ReadDictionaryColumn(null!));
        using (NativeDictionaryColumn column = reader.ReadDictionaryColumn("s"))
        {
            Assert.Equal(100, column.Dictionary.Length);
        }

        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadDictionaryColumn("s"));
    }

    [Fact]
    public void A_damaged_page_is_an_error_naming_the_file_column_and_row_group_and_frees_what_was_read()
    {
        string path = _folder.File("damaged.parquet");
        using (var builder = new NativeStringColumnBuilder())
        {
            for (int i = 0; i < Rows; i++)
            {
                builder.Append($"value-{i % 300}");
            }

            using NativeStringColumn values = builder.Build();
            new NativeParquetWriter { RowGroupSize = 10_000 }.Add("s", values).Write(path);
        }

        ParquetPages.Flip(path, ParquetPages.Chunk(path, 1, 0).End - 1, 0x01);
        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        var refused = Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("s"));
        Assert.Contains(path, refused.Message, StringComparison.Ordinal);
        Assert.Contains("'s'", refused.Message, StringComparison.Ordinal);
        Assert.Contains("row group 1", refused.Message, StringComparison.Ordinal);
        Assert.IsType<ParquetException>(refused.InnerException);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_written_dictionary_column_is_dictionary_encoded_and_reads_back_in_DuckDB_and_here()
    {
        string path = _folder.File("written.parquet");
        string?[] values = [.. Enumerable.Range(0, Rows).Select(i => i % 9 == 0 ? null : i % 10 == 0 ? "" : $"région-{i % 41}")];
        using (var builder = new NativeDictionaryColumnBuilder())
        using (var blobs = new NativeDictionaryColumnBuilder(isUtf8: false))
        {
            foreach (string? value in values)
            {
                builder.Append(value);
            }

            for (int i = 0; i < Rows; i++)
            {
                blobs.Append(BitConverter.GetBytes((long)(i % 3)));
            }

            using NativeDictionaryColumn column = builder.Build();
            using NativeDictionaryColumn binary = blobs.Build();
            new NativeParquetWriter { RowGroupSize = 9_000 }.Add("region", column).Add("blob", binary).Write(path);
        }

        using (var metadata = new ParquetFileReader(path))
        {
            using RowGroupReader group = metadata.RowGroup(0);
            using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(0);
            Assert.Contains(Encoding.RleDictionary, chunk.Encodings);
        }

        using var duck = new DuckDb();
        Assert.Equal("VARCHAR", duck.Scalar<string>($"SELECT typeof(region) FROM '{path}' LIMIT 1"));
        Assert.Equal("BLOB", duck.Scalar<string>($"SELECT typeof(blob) FROM '{path}' LIMIT 1"));
        long rows = duck.Query($"SELECT file_row_number, region, blob FROM read_parquet('{path}', file_row_number = true) ORDER BY file_row_number", r =>
        {
            long row = r.GetInt64(0);
            Assert.Equal(values[row], NullableString(r, 1));
            Assert.Equal(BitConverter.GetBytes(row % 3), NullableBytes(r, 2));
        });
        Assert.Equal(Rows, rows);

        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn back = reader.ReadDictionaryColumn("region");
        Assert.Equal(values.Where(v => v is not null).Distinct().Count(), back.Dictionary.Length);
        for (int row = 0; row < Rows; row++)
        {
            Assert.Equal(values[row], back.GetString(row));
        }
    }

    [Fact]
    public void Writing_a_column_whose_indices_were_changed_to_name_no_value_is_refused_and_leaves_no_file()
    {
        string path = _folder.File("forged.parquet");
        using var builder = new NativeDictionaryColumnBuilder();
        for (int i = 0; i < 1000; i++)
        {
            builder.Append($"v{i % 4}");
        }

        using NativeDictionaryColumn column = builder.Build();
        column.Indices[777] = 4;
        var refused = Assert.Throws<InvalidDataException>(() => new NativeParquetWriter().Add("s", column).Write(path));
        Assert.Contains("row 777", refused.Message);
        Assert.False(File.Exists(path));
        Assert.Equal(0, column.Indices.Handle.LeaseCount);
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
