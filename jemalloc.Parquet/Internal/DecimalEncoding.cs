using System.Buffers.Binary;
using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// Parquet's DECIMAL storage: which physical type holds a precision, and the big-endian two's
/// complement bytes that FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY decimals are stored as.
/// </summary>
internal static unsafe class DecimalEncoding
{
    private const int Int128Bytes = 16;

    /// <summary>The physical type the specification recommends for <paramref name="precision"/> digits: INT32 up to 9, INT64 up to 18, FIXED_LEN_BYTE_ARRAY beyond.</summary>
    internal static PhysicalType PhysicalFor(int precision) => precision switch
    {
        <= 9 => PhysicalType.Int32,
        <= 18 => PhysicalType.Int64,
        _ => PhysicalType.FixedLenByteArray,
    };

    /// <summary>The fewest bytes whose two's complement holds every value of <paramref name="precision"/> digits (16 for 38).</summary>
    internal static int BytesFor(int precision)
    {
        Int128 largest = PowerOfTen(precision) - 1;
        int bytes = 1;
        while (bytes < Int128Bytes && largest > (Int128.One << (8 * bytes - 1)) - 1)
        {
            bytes++;
        }

        return bytes;
    }

    /// <summary>10^<paramref name="exponent"/>, for 0 to 38.</summary>
    internal static Int128 PowerOfTen(int exponent)
    {
        Int128 value = Int128.One;
        for (int i = 0; i < exponent; i++)
        {
            value *= 10;
        }

        return value;
    }

    /// <summary>
    /// Decodes <paramref name="width"/> big-endian two's complement bytes; false when the value needs
    /// more than 128 bits (only possible when <paramref name="width"/> is over 16).
    /// </summary>
    internal static bool TryDecode(byte* bytes, int width, out Int128 value)
    {
        byte fill = (sbyte)bytes[0] < 0 ? (byte)0xFF : (byte)0;
        int skip = width - Int128Bytes;
        if (skip > 0)
        {
            // The bytes above the low 16 must only repeat the sign, and the low 16's top bit must agree with it.
            for (int i = 0; i < skip; i++)
            {
                if (bytes[i] != fill)
                {
                    value = default;
                    return false;
                }
            }

            if (((bytes[skip] ^ fill) & 0x80) != 0)
            {
                value = default;
                return false;
            }

            bytes += skip;
            width = Int128Bytes;
        }

        // Whole 8-byte words are read as words; a shorter top part is read bytewise and sign-extended.
        ulong low;
        long high;
        if (width > 8)
        {
            low = BinaryPrimitives.ReadUInt64BigEndian(new ReadOnlySpan<byte>(bytes + width - 8, 8));
            high = SignExtended(bytes, width - 8);
        }
        else
        {
            long value64 = SignExtended(bytes, width);
            low = (ulong)value64;
            high = value64 >> 63;
        }

        value = new Int128((ulong)high, low);
        return true;
    }

    // The first 1 to 8 big-endian bytes as a sign-extended 64-bit value.
    private static long SignExtended(byte* bytes, int count)
    {
        if (count == 8)
        {
            return BinaryPrimitives.ReadInt64BigEndian(new ReadOnlySpan<byte>(bytes, 8));
        }

        ulong raw = 0;
        for (int i = 0; i < count; i++)
        {
            raw = (raw << 8) | bytes[i];
        }

        int shift = 64 - (8 * count);
        return (long)(raw << shift) >> shift;
    }

    /// <summary>Writes the low <paramref name="width"/> bytes of <paramref name="value"/>'s two's complement, big-endian (the caller checked that they hold it).</summary>
    internal static void Encode(Int128 value, byte* destination, int width)
    {
        ulong word = (ulong)value;
        int top = width;
        if (width >= 8)
        {
            BinaryPrimitives.WriteUInt64BigEndian(new Span<byte>(destination + width - 8, 8), word);
            word = (ulong)(value >> 64);
            top = width - 8;
        }

        for (int i = top - 1; i >= 0; i--)
        {
            destination[i] = (byte)word;
            word >>= 8;
        }
    }
}
