namespace jemalloc.Parquet.Tests;

/// <summary>
/// A file whose footer declares other row counts than its pages hold is an
/// <see cref="InvalidDataException"/> naming the column and row group, whichever way the counts differ:
/// never a column cut short or filled past its data without a word.
/// </summary>
// It compares the ledger's process-wide counts, so it runs alone (see LedgerBalanced).
[Collection(LedgerBalancedAlone.Name)]
public sealed class MetadataMismatchTests : IDisposable
{
    private const int Rows = 1000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_footer_that_declares_fewer_rows_than_the_pages_hold_throws_InvalidDataException(bool nullable)
    {
        string path = WriteSample(nullable);
        // 1000 and 600 both take two varint bytes; the file, its row group and its column chunk say 600.
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, 600) >= 2, "the footer's row counts were found");

        using var reader = new NativeParquetReader(path);
        Assert.Equal(600, reader.RowCount);
        var error = nullable
            ? Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values"))
            : Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("values"));
        Assert.Contains("'values'", error.Message, StringComparison.Ordinal);
        Assert.Contains("row group 0", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_footer_that_declares_more_rows_than_the_pages_hold_throws_InvalidDataException()
    {
        string path = WriteSample(nullable: false);
        // 1000 and 1500: two varint bytes each.
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, 1500) >= 2, "the footer's row counts were found");

        using var reader = new NativeParquetReader(path);
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("values"));
        Assert.Contains("'values'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_file_row_count_that_is_not_its_row_groups_sum_throws_InvalidDataException_before_allocating()
    {
        string path = _folder.File("two-groups.parquet");
        using (var values = new HugeArray<long>(Rows, 1L))
        {
            new NativeParquetWriter { RowGroupSize = Rows / 2 }.Add("values", values).Write(path);
        }

        // Only the file's own count is 1000 (each row group says 500): it becomes 600.
        Assert.Equal(1, ParquetFooter.RewriteCounts(path, Rows, 600));
        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        var error = Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values"));
        Assert.Contains("600", error.Message, StringComparison.Ordinal);
        Assert.Contains("1,000", error.Message, StringComparison.Ordinal);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_footer_declaring_more_rows_than_an_address_space_holds_is_InvalidDataException_from_every_read()
    {
        string path = WriteSample(nullable: true);
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, long.MaxValue) >= 2, "the footer's row counts were found");

        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        // Before, the sizes computed from such a count overflowed: OverflowException, or an
        // ArgumentOutOfRangeException about a negative array length, naming neither file nor column.
        Assert.Contains("64-bit address space", Assert.Throws<InvalidDataException>(() => reader.RowCount).Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("values"));
        Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values"));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_footer_declaring_more_rows_than_memory_holds_is_OutOfMemoryException_naming_the_file_and_column(bool nullable)
    {
        string path = WriteSample(nullable);
        // 2^42 rows of 8 bytes: 32 TiB, refused by the allocator's check against the memory there is, before any is taken.
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, 1L << 42) >= 2, "the footer's row counts were found");

        using var reader = new NativeParquetReader(path);
        long live = AllocationLedger.LiveCount;
        Assert.Equal(1L << 42, reader.RowCount);
        var error = nullable
            ? Assert.Throws<OutOfMemoryException>(() => reader.ReadNullableColumn<long>("values"))
            : Assert.Throws<OutOfMemoryException>(() => reader.ReadColumn<long>("values"));
        Assert.Contains("'values'", error.Message, StringComparison.Ordinal);
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.IsType<OutOfMemoryException>(error.InnerException);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void An_intact_file_of_the_same_shape_reads_every_row()
    {
        using var reader = new NativeParquetReader(WriteSample(nullable: false));
        using HugeArray<long> values = reader.ReadColumn<long>("values");
        Assert.Equal(Rows, values.Length);
        Assert.Equal((Rows - 1) * 3L, values[Rows - 1]);
    }

    private string WriteSample(bool nullable)
    {
        string path = _folder.File(nullable ? "nullable.parquet" : "required.parquet");
        using var values = new HugeArray<long>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i * 3L;
        }

        var writer = new NativeParquetWriter { Compression = ParquetSharp.Compression.Uncompressed };
        if (nullable)
        {
            writer.Add("values", values, validity);
        }
        else
        {
            writer.Add("values", values);
        }

        writer.Write(path);
        return path;
    }
}
