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

        Int128 result = fill == 0 ? Int128.Zero : Int128.NegativeOne;
        for (int i = 0; i < width; i++)
        {
            result = (result << 8) | bytes[i];
        }

        value = result;
        return true;
    }

    /// <summary>Writes the low <paramref name="width"/> bytes of <paramref name="value"/>'s two's complement, big-endian (the caller checked that they hold it).</summary>
    internal static void Encode(Int128 value, byte* destination, int width)
    {
        for (int i = width - 1; i >= 0; i--)
        {
            destination[i] = (byte)value;
            value >>= 8;
        }
    }
}
