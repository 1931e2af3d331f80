using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Every refusal of the reader names the file, the column and its types, and an exception from
/// ParquetSharp (a malformed file, a page it cannot decode, a logical type newer than it) becomes an
/// <see cref="InvalidDataException"/> with that context and ParquetSharp's exception inside; a failed
/// read leaves nothing allocated.
/// </summary>
// It compares the ledger's process-wide counts, so it runs alone (see LedgerBalanced).
[Collection(LedgerBalancedAlone.Name)]
public sealed class ReaderErrorContextTests : IDisposable
{
    private const int Rows = 1000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void A_logical_type_ParquetSharp_does_not_know_throws_InvalidDataException_naming_the_column()
    {
        string path = _folder.File("geometry.parquet");
        var columns = new Column[] { new Column<string>("doc", LogicalType.Json()), new Column<long>("id") };
        using (var file = new ParquetFileWriter(path, columns))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using (LogicalColumnWriter<string> writer = group.NextColumn().LogicalWriter<string>())
            {
                writer.WriteBatch(["{}", "[]"]);
            }

            using (LogicalColumnWriter<long> writer = group.NextColumn().LogicalWriter<long>())
            {
                writer.WriteBatch([7, 8]);
            }

            file.Close();
        }

        // The footer's JSON logical type (union field 12, an empty struct) becomes GEOMETRY (field 17,
        // newer than ParquetSharp's logical types): ParquetSharp then throws ArgumentOutOfRangeException.
        ForgeFooter(path, [0xCC, 0x00, 0x00], [0x0C, 0x22, 0x00, 0x00]);

        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("doc"));
        Assert.Contains("'doc'", error.Message, StringComparison.Ordinal);
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("ByteArray", error.Message, StringComparison.Ordinal);
        Assert.IsType<ArgumentOutOfRangeException>(error.InnerException);
        Assert.Equal(live, AllocationLedger.LiveCount);

        using HugeArray<long> id = reader.ReadColumn<long>("id");
        Assert.Equal(8L, id[1]);

        // It is described rather than thrown for: a logical type this version of Parquet does not know.
        ParquetColumnInfo info = reader.GetColumnInfo("doc");
        Assert.Equal((PhysicalType.ByteArray, LogicalTypeEnum.Undefined), (info.PhysicalType, info.LogicalType));
        Assert.Contains("unknown", info.LogicalTypeText, StringComparison.Ordinal);

        // As other readers do, a BYTE_ARRAY column of a logical type unknown here reads as its bytes.
        using NativeStringColumn doc = reader.ReadStringColumn("doc");
        Assert.False(doc.IsUtf8);
        Assert.Equal("{}"u8.ToArray(), doc.GetBytes(0));
        Assert.Equal("[]"u8.ToArray(), doc.GetBytes(1));
    }

    [Fact]
    public void A_fixed_size_column_of_a_logical_type_ParquetSharp_does_not_know_reads_as_bytes_and_not_as_a_decimal()
    {
        string path = _folder.File("fixed-geometry.parquet");
        Guid[] values = [new(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), new(12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22)];
        using (var file = new ParquetFileWriter(path, [new Column<Guid>("u", LogicalType.Uuid())]))
        {
            using RowGroupWriter group = file.AppendRowGroup();
            using (LogicalColumnWriter<Guid> writer = group.NextColumn().LogicalWriter<Guid>())
            {
                writer.WriteBatch(values);
            }

            file.Close();
        }

        // The footer's UUID logical type (union field 14, an empty struct) becomes field 31, which no version of
        // the format defines yet (17, GEOMETRY, is known to ParquetSharp and refused on a fixed-size column when opened).
        ForgeFooter(path, [0xEC, 0x00, 0x00], [0x0C, 0x3E, 0x00, 0x00]);

        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadDecimalColumn("u"));
        Assert.Contains("'u'", error.Message, StringComparison.Ordinal);
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("does not know", error.Message, StringComparison.Ordinal);
        Assert.IsType<InvalidDataException>(Assert.ThrowsAny<Exception>(() => reader.ReadNullableColumn<Half>("u")));
        Assert.Equal(live, AllocationLedger.LiveCount);

        // Bytes are bytes, as for a BYTE_ARRAY column: the 16 bytes of each value as the file stores them.
        using FixedSizeBinaryColumn bytes = reader.ReadFixedSizeBinaryColumn("u");
        Assert.Equal(16, bytes.ByteWidth);
        Assert.Equal(values, new[] { bytes.GetGuid(0), bytes.GetGuid(1) });
    }

    [Fact]
    public void A_page_ParquetSharp_cannot_decompress_throws_InvalidDataException_naming_the_file_column_and_row_group()
    {
        string path = _folder.File("zstd.parquet");
        using (var values = new HugeArray<long>(Rows))
        {
            for (int i = 0; i < Rows; i++)
            {
                values[i] = i * 7L;
            }

            new NativeParquetWriter { Compression = Compression.Zstd, RowGroupSize = Rows / 2, WritePageChecksums = false }.Add("values", values).Write(path);
        }

        // Row group 1's pages are zstd frames: a damaged frame magic is a decompression error, not a checksum's.
        (long start, long end) = ParquetPages.Chunk(path, 1, 0);
        long frame = ParquetPages.Find(path, start, end, [0x28, 0xB5, 0x2F, 0xFD]);
        Assert.True(frame > 0, "a zstd frame in row group 1");
        ParquetPages.Flip(path, frame, 0xFF);

        using var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = false });
        long live = AllocationLedger.LiveCount;
        long bytes = AllocationLedger.LiveBytes;
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values"));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("'values'", error.Message, StringComparison.Ordinal);
        Assert.Contains("Int64", error.Message, StringComparison.Ordinal);
        Assert.Contains("row group 1", error.Message, StringComparison.Ordinal);
        Assert.IsType<ParquetException>(error.InnerException);
        Assert.Equal(live, AllocationLedger.LiveCount);
        Assert.Equal(bytes, AllocationLedger.LiveBytes);
    }

    [Fact]
    public void A_file_cut_short_throws_InvalidDataException_naming_it_on_open()
    {
        string path = WriteSample("cut.parquet");
        byte[] whole = File.ReadAllBytes(path);
        File.WriteAllBytes(path, whole[..^20]);
        var error = Assert.Throws<InvalidDataException>(() => new NativeParquetReader(path));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.IsType<ParquetException>(error.InnerException);
    }

    [Fact]
    public void Refusals_name_the_file_the_column_and_its_types()
    {
        string path = WriteSample("sample.parquet");
        using var reader = new NativeParquetReader(path);

        var wrongType = Assert.Throws<ArgumentException>(() => reader.ReadColumn<double>("values"));
        AssertNames(wrongType, path, "'values'", "Int64");

        var unsigned = Assert.Throws<ArgumentException>(() => reader.ReadColumn<ulong>("values"));
        AssertNames(unsigned, path, "'values'", "Int64");

        var noColumn = Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("missing"));
        AssertNames(noColumn, path, "'missing'", "values");

        var notElement = Assert.Throws<NotSupportedException>(() => reader.ReadColumn<NoParquetType>("values"));
        AssertNames(notElement, path, "'values'", "Int64", "logical type");

        var withNull = Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("holes"));
        AssertNames(withNull, path, "'holes'", "Int64");
        Assert.Contains("row 3", withNull.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_footer_that_disagrees_with_the_pages_is_named_with_the_file_and_the_column_s_types()
    {
        string path = WriteSample("forged.parquet");
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, 600) >= 2);
        using var reader = new NativeParquetReader(path);
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("values"));
        AssertNames(error, path, "'values'", "Int64");
    }

    private static void AssertNames(Exception error, params string[] parts)
    {
        foreach (string part in parts)
        {
            Assert.Contains(part, error.Message, StringComparison.Ordinal);
        }
    }

    // A required INT64 column "values" and an optional one "holes" with a null on every fourth row from row 3.
    private string WriteSample(string name)
    {
        string path = _folder.File(name);
        using var values = new HugeArray<long>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i;
            if (i % 4 == 3)
            {
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        new NativeParquetWriter { Compression = Compression.Uncompressed }.Add("values", values).Add("holes", values, validity).Write(path);
        return path;
    }

    // Replaces the one occurrence of a byte pattern in the footer and writes the footer's new length.
    private static void ForgeFooter(string path, byte[] from, byte[] to)
    {
        byte[] file = File.ReadAllBytes(path);
        int footerLength = BitConverter.ToInt32(file, file.Length - 8);
        int start = file.Length - 8 - footerLength;
        byte[] footer = file[start..(file.Length - 8)];
        int at = footer.AsSpan().IndexOf(from);
        Assert.True(at >= 0, "the pattern is in the footer");
        Assert.Equal(-1, footer.AsSpan(at + 1).IndexOf(from));
        byte[] forged = [.. footer[..at], .. to, .. footer[(at + from.Length)..]];
        using var stream = new FileStream(path, FileMode.Create);
        stream.Write(file, 0, start);
        stream.Write(forged);
        stream.Write(BitConverter.GetBytes(forged.Length));
        stream.Write("PAR1"u8);
    }

    /// <summary>An unmanaged type no Parquet column is read as.</summary>
    private readonly record struct NoParquetType(int A, int B);
}
