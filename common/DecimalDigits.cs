namespace jemalloc.AddOns;

/// <summary>
/// Whether decimal128 values fit their column's precision, for the add-ons' readers: a stored integer
/// with more digits than the precision comes only from a malformed file. One source for both add-ons,
/// compiled into each (linked from common/).
/// </summary>
internal static unsafe class DecimalDigits
{
    /// <summary>The first valid row whose unscaled value has more than <paramref name="precision"/> digits, or -1.</summary>
    /// <param name="values">The unscaled values.</param>
    /// <param name="bits">The validity bitmap (Arrow's layout), or null when every row is valid.</param>
    /// <param name="rows">The rows to check.</param>
    /// <param name="precision">The column's precision, 1 to 38.</param>
    internal static long FirstPastPrecision(Int128* values, byte* bits, long rows, int precision)
    {
        Int128 limit = Int128.One;
        for (int i = 0; i < precision; i++)
        {
            limit *= 10;
        }

        for (long row = 0; row < rows; row++)
        {
            Int128 value = values[row];
            if ((value >= limit || value <= -limit) && (bits == null || ValidityBitmap.IsSet(bits, row)))
            {
                return row;
            }
        }

        return -1;
    }
}
