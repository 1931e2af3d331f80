namespace jemalloc.Parquet.Tests;

/// <summary>
/// Forges a Parquet file's footer the way a hostile or damaged file would: the row counts it declares
/// changed, the pages left as they are. The footer is Thrift's compact encoding, where a 64-bit field
/// that follows the field before it is the byte <c>0x16</c> and a zigzag varint; a count is rewritten
/// in place when the new value's varint has the old one's length.
/// </summary>
internal static class ParquetFooter
{
    private const byte NextFieldI64 = 0x16;

    /// <summary>Rewrites every 64-bit field of the footer equal to <paramref name="from"/> as <paramref name="to"/>; returns how many it rewrote.</summary>
    internal static int RewriteCounts(string path, long from, long to)
    {
        byte[] file = File.ReadAllBytes(path);
        int footerLength = BitConverter.ToInt32(file, file.Length - 8);
        int start = file.Length - 8 - footerLength;
        byte[] old = Field(from);
        byte[] replacement = Field(to);
        if (old.Length != replacement.Length)
        {
            throw new ArgumentException($"{from} and {to} have varints of different lengths; pick counts of the same length.", nameof(to));
        }

        int rewritten = 0;
        for (int i = start; i <= file.Length - 8 - old.Length; i++)
        {
            if (file.AsSpan(i, old.Length).SequenceEqual(old))
            {
                replacement.CopyTo(file, i);
                rewritten++;
                i += old.Length - 1;
            }
        }

        File.WriteAllBytes(path, file);
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
