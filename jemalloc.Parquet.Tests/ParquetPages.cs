using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Finds a column chunk's data pages in a Parquet file through its footer (the chunk's offsets, as
/// ParquetSharp reads them) and the page headers (Thrift's compact encoding), to damage a page's
/// payload the way a bad disk or transfer would, or to see whether a writer gave its pages a CRC.
/// </summary>
internal static class ParquetPages
{
    // Thrift compact types.
    private const int I32 = 5;

    /// <summary>
    /// Where a column chunk starts (its first page's header) and ends. The writers these tests use
    /// (ParquetSharp's and DuckDB's) lay the chunks out one after another from the file's 4-byte magic,
    /// row group by row group and column by column, each <c>TotalCompressedSize</c> bytes long (headers
    /// and dictionary page included); ParquetSharp does not show a chunk's own offsets.
    /// </summary>
    internal static (long Start, long End) Chunk(string path, int rowGroup, int column)
    {
        using var file = new ParquetFileReader(path);
        using FileMetaData metadata = file.FileMetaData;
        long offset = 4;
        for (int g = 0; g < metadata.NumRowGroups; g++)
        {
            using RowGroupReader group = file.RowGroup(g);
            for (int c = 0; c < metadata.NumColumns; c++)
            {
                using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(c);
                if (g == rowGroup && c == column)
                {
                    return (offset, offset + chunk.TotalCompressedSize);
                }

                offset += chunk.TotalCompressedSize;
            }
        }

        throw new ArgumentOutOfRangeException(nameof(rowGroup), $"The file has no chunk of column {column} in row group {rowGroup}.");
    }

    /// <summary>Whether the page header at <paramref name="offset"/> carries a CRC (field 4 of PageHeader).</summary>
    internal static bool HasCrc(string path, long offset)
    {
        byte[] file = File.ReadAllBytes(path);
        int at = checked((int)offset);
        short field = 0;
        while (true)
        {
            byte header = file[at++];
            if (header == 0)
            {
                return false; // the header's end: no field 4
            }

            int delta = header >> 4;
            int type = header & 0x0F;
            field = delta != 0 ? (short)(field + delta) : (short)ZigZag(ReadVarint(file, ref at));
            if (field == 4)
            {
                return true;
            }

            if (field > 4 || type != I32)
            {
                // Fields 1-3 are the i32 type and sizes; anything else past them means no CRC came first.
                return false;
            }

            ReadVarint(file, ref at);
        }
    }

    /// <summary>XORs one byte of the file at <paramref name="offset"/> with <paramref name="mask"/>.</summary>
    internal static void Flip(string path, long offset, byte mask)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.ReadWrite);
        stream.Position = offset;
        int old = stream.ReadByte();
        stream.Position = offset;
        stream.WriteByte((byte)(old ^ mask));
    }

    /// <summary>The first place from <paramref name="start"/> to <paramref name="end"/> where <paramref name="pattern"/> occurs, or -1.</summary>
    internal static long Find(string path, long start, long end, ReadOnlySpan<byte> pattern)
    {
        byte[] file = File.ReadAllBytes(path);
        int found = file.AsSpan(checked((int)start), checked((int)(end - start))).IndexOf(pattern);
        return found < 0 ? -1 : start + found;
    }

    private static ulong ReadVarint(byte[] file, ref int at)
    {
        ulong value = 0;
        for (int shift = 0; ; shift += 7)
        {
            byte b = file[at++];
            value |= (ulong)(b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                return value;
            }
        }
    }

    private static long ZigZag(ulong value) => (long)(value >> 1) ^ -(long)(value & 1);
}
