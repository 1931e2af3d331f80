using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// The messages of the reader's row-group loop, word for word, for every kind of column it reads
/// (numeric, narrowed, FLOAT16, decimal, fixed-size binary, string): a footer that declares fewer
/// rows than the pages hold, one that declares more, and a page ParquetSharp cannot decode. The
/// numeric, flat and string reads share one loop; these pin what each kind says, and that a failed
/// read leaves the ledger as it found it.
/// </summary>
public sealed class RowGroupMessageTests : LedgerBalanced
{
    private const int Rows = 1000;
    private readonly TempFolder _folder = new();

    public override void Dispose()
    {
        _folder.Dispose();
        base.Dispose();
    }

    [Theory]
    [InlineData(600)] // fewer rows than the pages hold: more values than the row group's rows
    [InlineData(1500)] // more: the pages end at row 1,000
    public void A_footer_that_disagrees_with_the_pages_is_named_with_the_row_group_in_the_same_words_for_every_kind(int declared)
    {
        string path = WriteSample($"declares-{declared}.parquet", rowGroupSize: Rows, Compression.Uncompressed);
        // 1000, 600 and 1500 each take two varint bytes: the file, its row group and its column chunks say the new count.
        Assert.True(ParquetFooter.RewriteCounts(path, Rows, declared) >= 2, "the footer's row counts were found");
        using var reader = new NativeParquetReader(path);

        foreach ((_, string where, Action read) in Reads(reader, path))
        {
            string expected = declared < Rows
                ? $"The {where} holds more values in row group 0 than the 600 rows the file's metadata declares for it."
                : $"The {where} ends at row 1,000 of row group 0, which the metadata says has 1,500 rows.";
            Assert.Equal(expected, Assert.Throws<InvalidDataException>(read).Message);
        }
    }

    [Fact]
    public void A_page_that_cannot_be_decoded_is_named_with_its_row_group_and_first_row_and_wraps_ParquetSharp_s_exception()
    {
        string path = WriteSample("damaged.parquet", rowGroupSize: Rows / 2, Compression.Zstd);
        using (var reader = new NativeParquetReader(path))
        {
            for (int c = 0; c < reader.ColumnCount; c++)
            {
                // Each column's first zstd frame in row group 1 (the dictionary page or the first data page).
                (long start, long end) = ParquetPages.Chunk(path, 1, c);
                long frame = ParquetPages.Find(path, start, end, [0x28, 0xB5, 0x2F, 0xFD]);
                Assert.True(frame > 0, $"a zstd frame in column {c}'s chunk of row group 1");
                ParquetPages.Flip(path, frame, 0xFF);
            }
        }

        using var damaged = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = false });
        foreach ((string _, string where, Action read) in Reads(damaged, path))
        {
            var error = Assert.Throws<InvalidDataException>(read);
            var inner = Assert.IsType<ParquetException>(error.InnerException);
            Assert.Equal($"The {where} cannot be decoded at row group 1, in the pages from row 500: {inner.Message}", error.Message);
        }
    }

    // Each column, how the messages describe it, and its read.
    private static IEnumerable<(string Column, string Where, Action Read)> Reads(NativeParquetReader reader, string path) =>
    [
        ("n", $"column 'n' (Int64, logical type None) of '{path}'", () => reader.ReadColumn<long>("n").Dispose()),
        ("s", $"column 's' (Int32, logical type Int(bitWidth=16, isSigned=true)) of '{path}'", () => reader.ReadNullableColumn<short>("s").Dispose()),
        ("h", $"column 'h' (FixedLenByteArray, logical type Float16) of '{path}'", () => reader.ReadColumn<Half>("h").Dispose()),
        ("d", $"column 'd' (Int64, logical type Decimal(precision=12, scale=2)) of '{path}'", () => reader.ReadDecimalColumn("d").Dispose()),
        ("u", $"column 'u' (FixedLenByteArray, logical type UUID) of '{path}'", () => reader.ReadFixedSizeBinaryColumn("u").Dispose()),
        ("t", $"column 't' (ByteArray, text) of '{path}'", () => reader.ReadStringColumn("t").Dispose()),
    ];

    // One column of each kind: INT64, INT(16) with nulls, FLOAT16, DECIMAL(12, 2) on INT64, UUID, STRING with nulls.
    private string WriteSample(string name, long rowGroupSize, Compression compression)
    {
        string path = _folder.File(name);
        using var longs = new HugeArray<long>(Rows);
        using var shorts = new HugeArray<short>(Rows);
        using var shortValidity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        using var halves = new HugeArray<Half>(Rows);
        using var uuid = new FixedSizeBinaryColumn(new HugeArray<byte>(Rows * 16L), null, Rows, 16);
        using DecimalColumn money = FlatTypesWrittenForDuckDbTests.MakeDecimals(Rows, 12, 2, 1_000_000_000_000, nullEvery: 0);
        using var text = new NativeStringColumnBuilder();
        for (int i = 0; i < Rows; i++)
        {
            longs[i] = i * 3L;
            shorts[i] = (short)(i - 500);
            halves[i] = (Half)(i / 4.0);
            uuid.Data[(i * 16L) + (i % 16)] = (byte)i;
            text.Append(i % 7 == 3 ? null : $"value {i}");
            if (i % 9 == 4)
            {
                shortValidity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        using NativeStringColumn strings = text.Build();
        new NativeParquetWriter { Compression = compression, RowGroupSize = rowGroupSize, WritePageChecksums = false }
            .Add("n", longs)
            .Add("s", shorts, shortValidity)
            .Add("h", halves)
            .Add("d", money)
            .AddUuid("u", uuid)
            .Add("t", strings)
            .Write(path);
        return path;
    }
}
