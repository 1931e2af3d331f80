using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Pages written with a CRC-32 are verified by default: one byte damaged inside a data page's payload
/// is an <see cref="InvalidDataException"/> naming the file, the column and the row group, and nothing
/// read is left allocated; with verification off the damaged value reads as damaged. The damage is
/// made by hand, at the page the file's footer locates.
/// </summary>
// It compares the ledger's process-wide counts, so it runs alone (see LedgerBalanced).
[Collection(LedgerBalancedAlone.Name)]
public sealed class PageChecksumTests : IDisposable
{
    // A multiple of 8: each row group's boolean page ends with a whole byte of eight rows' bits.
    private const int Rows = 8000;
    private const int GroupRows = 4000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void The_writer_gives_every_page_a_checksum_unless_told_not_to()
    {
        string with = WriteFlags("with.parquet", checksums: true);
        string without = WriteFlags("without.parquet", checksums: false);
        for (int g = 0; g < 2; g++)
        {
            Assert.True(ParquetPages.HasCrc(with, ParquetPages.Chunk(with, g, 0).Start), $"row group {g} has a CRC");
            Assert.False(ParquetPages.HasCrc(without, ParquetPages.Chunk(without, g, 0).Start), $"row group {g} has no CRC");
        }

        Assert.True(new NativeParquetWriter().WritePageChecksums);
        Assert.True(ParquetReadOptions.Default.VerifyPageChecksums);
        Assert.True(new ParquetReadOptions().VerifyPageChecksums);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_damaged_page_throws_InvalidDataException_naming_the_file_column_and_row_group_and_frees_what_was_read(bool nullable)
    {
        string path = WriteFlags("damaged.parquet", checksums: true);
        // The last byte of row group 1's only page holds the bits of its last eight rows.
        ParquetPages.Flip(path, ParquetPages.Chunk(path, 1, 0).End - 1, 0x01);

        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        long bytes = AllocationLedger.LiveBytes;
        InvalidDataException error = nullable
            ? Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<bool>("flags"))
            : Assert.Throws<InvalidDataException>(() => reader.ReadColumn<bool>("flags"));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("'flags'", error.Message, StringComparison.Ordinal);
        Assert.Contains("Boolean", error.Message, StringComparison.Ordinal);
        Assert.Contains("row group 1", error.Message, StringComparison.Ordinal);
        Assert.Contains("checksum", error.Message, StringComparison.Ordinal);
        // The group's only page: ParquetSharp's message numbers it, from 0 within the chunk.
        Assert.Contains("page 0 of row group 1", error.Message, StringComparison.Ordinal);
        Assert.IsType<ParquetException>(error.InnerException);
        Assert.Equal(live, AllocationLedger.LiveCount);
        Assert.Equal(bytes, AllocationLedger.LiveBytes);

        // The reader stays usable: the intact column reads.
        using HugeArray<int> ids = reader.ReadColumn<int>("ids");
        Assert.Equal(Rows - 1, ids[Rows - 1]);
    }

    [Fact]
    public void With_verification_off_the_damaged_page_reads_and_exactly_the_damaged_value_differs()
    {
        string path = WriteFlags("unverified.parquet", checksums: true);
        ParquetPages.Flip(path, ParquetPages.Chunk(path, 1, 0).End - 1, 0x01);

        using var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = false });
        using HugeArray<bool> flags = reader.ReadColumn<bool>("flags");
        var differing = new List<long>();
        for (long i = 0; i < Rows; i++)
        {
            if (flags[i] != Flag(i))
            {
                differing.Add(i);
            }
        }

        // Bit 0 of the last byte: the first of the group's last eight rows.
        Assert.Equal([Rows - 8L], differing);
    }

    [Fact]
    public void A_page_written_without_a_checksum_cannot_be_verified_and_reads_as_damaged()
    {
        string path = WriteFlags("no-crc.parquet", checksums: false);
        ParquetPages.Flip(path, ParquetPages.Chunk(path, 1, 0).End - 1, 0x01);

        using var reader = new NativeParquetReader(path);
        using HugeArray<bool> flags = reader.ReadColumn<bool>("flags");
        Assert.NotEqual(Flag(Rows - 8), flags[Rows - 8]);
    }

    [Fact]
    public void A_file_with_page_checksums_reads_in_DuckDB_as_written()
    {
        string path = WriteFlags("duck.parquet", checksums: true);
        using var duck = new DuckDb();
        Assert.Equal(Rows - (Rows + 2) / 3, duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE flags"));
        Assert.Equal((long)Rows * (Rows - 1) / 2, duck.Scalar<long>($"SELECT sum(ids)::BIGINT FROM '{path}'"));
    }

    [Fact]
    public void Whether_DuckDB_writes_page_checksums_and_how_its_files_read_either_way()
    {
        string path = _folder.File("by-duckdb.parquet");
        using (var duck = new DuckDb())
        {
            duck.Execute($"COPY (SELECT i::BIGINT AS id FROM range({Rows}) r(i)) TO '{path}' (FORMAT parquet, COMPRESSION uncompressed)");
        }

        // DuckDB's writer gives its pages no CRC (the header's optional field 4 is absent), so no
        // reader can verify them: both settings read the file alike.
        Assert.False(ParquetPages.HasCrc(path, ParquetPages.Chunk(path, 0, 0).Start));
        foreach (bool verify in new[] { true, false })
        {
            using var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = verify });
            using NullableColumn<long> ids = reader.ReadNullableColumn<long>("id");
            Assert.Equal(Rows, ids.Length);
            Assert.Equal(0, ids.NullCount);
            Assert.Equal(Rows - 1L, ids.Values[Rows - 1]);
        }
    }

    [Fact]
    public void Null_options_throw_ArgumentNullException()
    {
        string path = WriteFlags("options.parquet", checksums: true);
        Assert.Equal("options", Assert.Throws<ArgumentNullException>(() => new NativeParquetReader(path, null!)).ParamName);
    }

    private static bool Flag(long row) => row % 3 != 0;

    // Two row groups of a boolean column (its page's payload is the rows' bits, no dictionary) and an int column.
    private string WriteFlags(string name, bool checksums)
    {
        string path = _folder.File(name);
        using var flags = new HugeArray<bool>(Rows);
        using var ids = new HugeArray<int>(Rows);
        for (int i = 0; i < Rows; i++)
        {
            flags[i] = Flag(i);
            ids[i] = i;
        }

        new NativeParquetWriter { Compression = Compression.Uncompressed, RowGroupSize = GroupRows, WritePageChecksums = checksums }
            .Add("flags", flags)
            .Add("ids", ids)
            .Write(path);
        return path;
    }
}
