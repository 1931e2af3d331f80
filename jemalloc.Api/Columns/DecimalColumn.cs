using System.Globalization;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A column of decimals of up to 38 digits in native memory: each row's unscaled value as an
/// <see cref="Int128"/> (the value is <c>unscaled / 10^Scale</c>), with an optional validity bitmap in
/// Arrow's layout. The values block has Arrow's decimal128 layout, so the Arrow add-on shows it to Arrow
/// without a copy; the Parquet add-on reads DECIMAL columns into it and writes it back.
/// </summary>
/// <remarks>
/// <para>
/// A column has <see cref="Length"/> rows, which may be fewer than its arrays hold: a native array holds
/// at least one element, so a column of no rows is <see cref="Length"/> 0 over one-element arrays. A null
/// row's unscaled value is whatever its element holds (zero in a column the Parquet add-on read).
/// </para>
/// <para>
/// The column owns both arrays: <see cref="Dispose"/> frees them, and refuses, freeing nothing, while
/// either is leased, held or acquired (an Arrow view, a Parquet write, a caller's lease).
/// </para>
/// </remarks>
public sealed class DecimalColumn : IDisposable
{
    /// <summary>The most digits a column holds: those of a decimal128.</summary>
    public const int MaxPrecision = 38;

    private const string TypeName = nameof(DecimalColumn);

    // 10^28 and 2^96: a System.Decimal holds at most scale 28 and a 96-bit magnitude.
    private const int MaxDecimalScale = 28;
    private static readonly Int128 DecimalMagnitudeLimit = Int128.One << 96;

    private int _disposed;

    /// <summary>
    /// Wraps unscaled values and an optional validity bitmap the caller made; the column owns both
    /// from here on and counts the nulls once.
    /// </summary>
    /// <param name="values">The unscaled values, at least <paramref name="length"/> of them.</param>
    /// <param name="validity">The validity bitmap (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), at least <c>(length + 7) / 8</c> bytes (and one); <see langword="null"/> when no row is null.</param>
    /// <param name="length">The number of rows.</param>
    /// <param name="precision">The most digits a value has, 1 to 38.</param>
    /// <param name="scale">The digits after the decimal point, 0 to <paramref name="precision"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative or more than <paramref name="values"/> holds; <paramref name="precision"/> or <paramref name="scale"/> is outside its range.</exception>
    /// <exception cref="ArgumentException"><paramref name="validity"/> is too short, or is <paramref name="values"/> itself.</exception>
    /// <exception cref="ObjectDisposedException">An array was disposed.</exception>
    public DecimalColumn(HugeArray<Int128> values, HugeArray<byte>? validity, long length, int precision, int scale)
    {
        CheckPrecisionAndScale(precision, scale);
        NullCount = ColumnParts.Check(values, validity, length, 1, "values");
        Values = values;
        Validity = validity;
        Length = length;
        Precision = precision;
        Scale = scale;
    }

    /// <summary>The unscaled values (<c>value * 10^Scale</c>), one per row, in Arrow's decimal128 layout.</summary>
    public HugeArray<Int128> Values { get; }

    /// <summary>The validity bitmap (Arrow's layout), or <see langword="null"/> when the column has no nulls.</summary>
    public HugeArray<byte>? Validity { get; }

    /// <summary>The number of rows (the arrays may hold more elements).</summary>
    public long Length { get; }

    /// <summary>The most digits a value has (1 to 38).</summary>
    public int Precision { get; }

    /// <summary>The digits after the decimal point (0 to <see cref="Precision"/>).</summary>
    public int Scale { get; }

    /// <summary>How many rows are null, counted when the column was made.</summary>
    public long NullCount { get; }

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <param name="row">The row.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool IsNull(long row)
    {
        ColumnParts.CheckRow(row, Length);
        Values.ThrowIfInvalid();
        return ColumnParts.IsNull(Validity, row);
    }

    /// <summary>Row <paramref name="row"/>'s unscaled value.</summary>
    /// <param name="row">The row.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public Int128 GetUnscaled(long row)
    {
        ColumnParts.CheckRow(row, Length);
        return Values[row];
    }

    /// <summary>Row <paramref name="row"/>'s value as a <see cref="decimal"/>, exactly.</summary>
    /// <param name="row">The row.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="OverflowException">The value has more digits than a <see cref="decimal"/> holds (its unscaled magnitude reaches 2^96, or it needs more than 28 digits after the point).</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public decimal GetDecimal(long row)
    {
        ColumnParts.CheckRow(row, Length);
        Int128 unscaled = Values[row];
        // Int128.MinValue has no absolute value; MaxValue stands for it, as far past 2^96 as it is.
        Int128 magnitude = Int128.Abs(unscaled == Int128.MinValue ? Int128.MaxValue : unscaled);
        int scale = Scale;
        // Trailing zeros past the 28 places a decimal has lose nothing when dropped.
        while (scale > MaxDecimalScale && magnitude % 10 == 0)
        {
            magnitude /= 10;
            scale--;
        }

        if (scale > MaxDecimalScale || magnitude >= DecimalMagnitudeLimit)
        {
            ThrowDecimalOverflow(row);
        }

        ulong low = (ulong)magnitude;
        uint high = (uint)(magnitude >> 64);
        return new decimal((int)(uint)low, (int)(uint)(low >> 32), (int)high, unscaled < 0, (byte)scale);
    }

    /// <summary>Row <paramref name="row"/>'s value as text, exactly, whatever its digits: an optional minus sign, the integer digits, and <see cref="Scale"/> digits after a point (invariant culture).</summary>
    /// <param name="row">The row.</param>
    /// <returns>The value's text; a null row's is its stored unscaled value's.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public string ToString(long row)
    {
        ColumnParts.CheckRow(row, Length);
        return Format(Values[row], Scale);
    }

    /// <summary>Frees the values and the bitmap. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">An array is leased, held or acquired (a view, a write, a lease); nothing was freed.</exception>
    public void Dispose() => ColumnParts.Dispose(ref _disposed, Values, Validity, TypeName, "values");

    /// <summary>The exact text of <paramref name="unscaled"/> / 10^<paramref name="scale"/>.</summary>
    internal static string Format(Int128 unscaled, int scale)
    {
        bool negative = unscaled < 0;
        // Int128.MinValue has no positive counterpart, so its digits come from the unsigned value.
        string digits = negative ? ((UInt128)(-(unscaled + 1)) + 1).ToString(CultureInfo.InvariantCulture) : unscaled.ToString(CultureInfo.InvariantCulture);
        if (scale > 0)
        {
            digits = digits.PadLeft(scale + 1, '0');
            digits = string.Concat(digits.AsSpan(0, digits.Length - scale), ".", digits.AsSpan(digits.Length - scale));
        }

        return negative ? "-" + digits : digits;
    }

    private static void CheckPrecisionAndScale(int precision, int scale)
    {
        if (precision is < 1 or > MaxPrecision)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(precision), precision, $"A decimal column's precision is 1 to {MaxPrecision} digits.");
        }

        if (scale < 0 || scale > precision)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(scale), scale, $"A decimal column's scale is 0 to its precision ({precision}).");
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private void ThrowDecimalOverflow(long row) =>
        throw new OverflowException($"Row {row:N0} of the decimal column holds {Format(Values[row], Scale)} (precision {Precision}, scale {Scale}), which a System.Decimal cannot hold exactly; read it with GetUnscaled or ToString.");
}
