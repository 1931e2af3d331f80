using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// The reader decodes into memory it does not clear first. Here that memory is made dirty on purpose
/// (an arena's block filled with a pattern, freed, and handed to the read): every null row still reads
/// as <see langword="default"/>, every other row as written, and a read that fails gives the arena back
/// everything it took.
/// </summary>
public sealed class UnclearedMemoryTests : IDisposable
{
    private const int Rows = 100_000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Null_rows_read_as_default_in_reused_dirty_memory()
    {
        string path = Write("nulls.parquet", Compression.Snappy);
        using var arena = new JemArena();
        (nint dirty, long dirtyBytes) = Dirty(arena);

        using var reader = new NativeParquetReader(path);
        using NullableColumn<long> column = reader.ReadNullableColumn<long>("values", arena.Options);
        // Most of the read's block is memory the pattern was written to, so the check below is about dirty memory.
        AssertMostlyDirty(column.Values.Pointer, Rows * sizeof(long), dirty, dirtyBytes);
        for (long row = 0; row < Rows; row++)
        {
            bool isNull = row % 7 == 3;
            Assert.Equal(isNull, column.IsNull(row));
            Assert.Equal(isNull ? 0L : row * 5, column.Values[row]);
        }

        Assert.Equal(Rows / 7 + (Rows % 7 > 3 ? 1 : 0), column.NullCount);
    }

    [Fact]
    public void Narrowed_null_rows_read_as_default_in_reused_dirty_memory()
    {
        string path = Write("narrow.parquet", Compression.Uncompressed);
        using var arena = new JemArena();
        (nint dirty, long dirtyBytes) = Dirty(arena);

        using var reader = new NativeParquetReader(path);
        using NullableColumn<short> column = reader.ReadNullableColumn<short>("small", arena.Options);
        AssertMostlyDirty(column.Values.Pointer, Rows * sizeof(short), dirty, dirtyBytes);
        for (long row = 0; row < Rows; row++)
        {
            Assert.Equal(row % 7 == 3 ? (short)0 : (short)(row % 1000), column.Values[row]);
        }
    }

    [Fact]
    public void A_read_that_fails_gives_its_arena_back_every_byte()
    {
        string path = Write("damaged.parquet", Compression.Uncompressed);
        (long start, long end) = ParquetPages.Chunk(path, 0, 0);
        ParquetPages.Flip(path, start + ((end - start) / 2), 0x40);

        using var arena = new JemArena();
        using var reader = new NativeParquetReader(path);
        Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values", arena.Options));
        Assert.Equal(0, arena.UsedBytes);
        Assert.Throws<InvalidDataException>(() => reader.ReadNullableColumn<long>("values", arena.Options with { HugePages = true }));
        Assert.Equal(0, arena.UsedBytes);

        // The intact column reads into the same arena, and gives it all back when disposed.
        using (NullableColumn<short> small = reader.ReadNullableColumn<short>("small", arena.Options))
        {
            Assert.True(arena.UsedBytes >= Rows * sizeof(short));
        }

        Assert.Equal(0, arena.UsedBytes);
    }

    // Fills a fresh arena's first block, several times what one read takes, with set bits and frees it:
    // jemalloc keeps the pages (dirty) and carves the arena's next blocks out of them.
    private static unsafe (nint Address, long Bytes) Dirty(JemArena arena)
    {
        using HugeArray<long> garbage = arena.CreateHugeArray<long>(Rows * 4);
        garbage.Fill(-1L);
        return (garbage.Pointer, garbage.Length * sizeof(long));
    }

    private static void AssertMostlyDirty(nint block, long bytes, nint dirty, long dirtyBytes)
    {
        long overlap = Math.Min(block + bytes, dirty + dirtyBytes) - Math.Max(block, dirty);
        Assert.True(overlap >= bytes / 2, $"{overlap:N0} of the block's {bytes:N0} bytes were written with the pattern");
    }

    // Two OPTIONAL columns with a null on every seventh row from row 3: INT64 values (row * 5) and
    // INT(16) values (row % 1000), the second read through the narrowing path.
    private string Write(string name, Compression codec)
    {
        string path = _folder.File(name);
        using var values = new HugeArray<long>(Rows);
        using var small = new HugeArray<short>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i * 5L;
            small[i] = (short)(i % 1000);
            if (i % 7 == 3)
            {
                validity[i >> 3] &= (byte)~(1 << (i & 7));
            }
        }

        new NativeParquetWriter { Compression = codec }.Add("values", values, validity).Add("small", small, validity).Write(path);
        return path;
    }
}
