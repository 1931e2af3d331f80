namespace jemalloc.Parquet.Tests;

/// <summary>
/// Forges a Parquet file's footer the way a hostile or damaged file would: the row counts it declares
/// changed, the pages left as they are. The footer is Thrift's compact encoding, where a 64-bit field
/// that follows the field before it is the byte <c>0x16</c> and a zigzag varint.
/// </summary>
internal static class ParquetFooter
{
    private const byte NextFieldI64 = 0x16;

    /// <summary>
    /// Rewrites every 64-bit field of the footer equal to <paramref name="from"/> as <paramref name="to"/>
    /// (the footer and its length are written again when the two varints differ in length: nothing in the
    /// footer points into the footer itself); returns how many it rewrote.
    /// </summary>
    internal static int RewriteCounts(string path, long from, long to)
    {
        byte[] file = File.ReadAllBytes(path);
        int footerLength = BitConverter.ToInt32(file, file.Length - 8);
        int start = file.Length - 8 - footerLength;
        byte[] old = Field(from);
        byte[] replacement = Field(to);
        var footer = new List<byte>(footerLength + 64);
        int rewritten = 0;
        for (int i = start; i < file.Length - 8; i++)
        {
            if (i <= file.Length - 8 - old.Length && file.AsSpan(i, old.Length).SequenceEqual(old))
            {
                footer.AddRange(replacement);
                rewritten++;
                i += old.Length - 1;
            }
            else
            {
                footer.Add(file[i]);
            }
        }

        using var stream = new FileStream(path, FileMode.Create);
        stream.Write(file, 0, start);
        stream.Write([.. footer]);
        stream.Write(BitConverter.GetBytes(footer.Count));
        stream.Write("PAR1"u8);
        return rewritten;
    }

    private static byte[] Field(long value)
    {
        var bytes = new List<byte> { NextFieldI64 };
        ulong zigzag = (ulong)((value << 1) ^ (value >> 63));
        while (zigzag >= 0x80)
        {
            bytes.Add((byte)(zigzag | 0x80));
            zigzag >>= 7;
        }

        bytes.Add((byte)zigzag);
        return [.. bytes];
    }
}
