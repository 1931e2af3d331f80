using System.Text;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A column of variable-length values, UTF-8 strings or binary, in Apache Arrow's layout: one native
/// block of value bytes, one of 64-bit offsets (row <c>i</c> is bytes <c>[Offsets[i], Offsets[i + 1])</c>
/// of <see cref="Data"/>), and an optional validity bitmap. Ten million strings are three blocks, none of
/// which the garbage collector walks; a column may hold more than 2^31 rows and more than 2 GiB of bytes.
/// </summary>
/// <remarks>
/// <para>
/// Read values under a scope: <c>using var values = column.OpenRead();</c> and <c>values[row]</c> is the
/// row's bytes as a <see cref="ReadOnlySpan{T}"/>, valid while the scope is open (the compiler keeps the
/// span inside the scope's variable). The comparisons (<see cref="ValueEquals(long, ReadOnlySpan{byte})"/>,
/// <see cref="StartsWith(long, ReadOnlySpan{byte})"/>, <see cref="CompareOrdinal"/>) and searches
/// (<see cref="IndexOf(ReadOnlySpan{byte}, long)"/>, <see cref="CountStartsWith"/>,
/// <see cref="SelectStartsWith"/>) work on the UTF-8 bytes without decoding them; <see cref="GetString"/>
/// decodes one value when asked.
/// </para>
/// <para>
/// The column owns its three arrays and frees them in <see cref="Dispose"/>. They are public so that the
/// add-ons can hand them to Arrow, Parquet or native code without a copy; every read checks the offsets it
/// uses against the data block, so offsets changed through <see cref="Offsets"/> give an
/// <see cref="InvalidDataException"/>, never a read outside the block. Reads may run on any number of
/// threads at once.
/// </para>
/// </remarks>
public sealed partial class NativeStringColumn : IDisposable
{
    private const string TypeName = nameof(NativeStringColumn);

    /// <summary>
    /// Takes ownership of the three arrays of a column in Arrow's layout, after checking that they
    /// describe one: <paramref name="offsets"/> holds at least <paramref name="length"/> + 1 offsets, none
    /// negative, none smaller than the one before, the last within <paramref name="data"/>, no value longer
    /// than <see cref="int.MaxValue"/> bytes; <paramref name="validity"/>, when given, holds a bit per row.
    /// </summary>
    /// <param name="offsets">Row <c>i</c>'s value is bytes <c>[offsets[i], offsets[i + 1])</c> of <paramref name="data"/>.</param>
    /// <param name="data">The values' bytes (at least one byte: an array is never empty, even for a column whose values are all empty).</param>
    /// <param name="validity">Arrow's validity bitmap (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), or <see langword="null"/> when no row is null.</param>
    /// <param name="length">The number of rows.</param>
    /// <param name="isUtf8">Whether the values are UTF-8 text (Arrow's utf8, Parquet's STRING) rather than binary.</param>
    /// <exception cref="ArgumentNullException"><paramref name="offsets"/> or <paramref name="data"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative or needs more offsets than <paramref name="offsets"/> holds.</exception>
    /// <exception cref="ArgumentException">Two of the arrays are the same array; the offsets do not describe values inside <paramref name="data"/>; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ObjectDisposedException">An array was disposed.</exception>
    public NativeStringColumn(HugeArray<long> offsets, HugeArray<byte> data, HugeArray<byte>? validity, long length, bool isUtf8)
    {
        ArgumentNullException.ThrowIfNull(offsets);
        ArgumentNullException.ThrowIfNull(data);
        if (ReferenceEquals(data, validity))
        {
            ThrowHelper.ThrowArgument(nameof(validity), "The validity bitmap must be an array of its own, not the data block.");
        }

        if ((ulong)length >= (ulong)offsets.Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, $"A column of {length:N0} rows needs {length + 1:N0} offsets; the offsets array holds {offsets.Length:N0}.");
        }

        Offsets = offsets;
        Data = data;
        Validity = validity;
        Length = length;
        IsUtf8 = isUtf8;
        (ByteCount, NullCount) = ColumnChecks.CheckStringLayout(offsets, data, validity, length);
    }

    /// <summary>The number of rows.</summary>
    public long Length { get; }

    /// <summary>How many rows are null, counted when the column was made.</summary>
    public long NullCount { get; }

    /// <summary>The bytes the values take: <c>Offsets[Length] - Offsets[0]</c>, counted when the column was made.</summary>
    public long ByteCount { get; }

    /// <summary>Whether the values are UTF-8 text; otherwise binary.</summary>
    public bool IsUtf8 { get; }

    /// <summary>The offsets, <see cref="Length"/> + 1 of them used (the array may be longer).</summary>
    public HugeArray<long> Offsets { get; }

    /// <summary>The values' bytes (the array may be longer than the bytes used, and holds at least one byte).</summary>
    public HugeArray<byte> Data { get; }

    /// <summary>The validity bitmap in Arrow's layout, or <see langword="null"/> when no row is null.</summary>
    public HugeArray<byte>? Validity { get; }

    /// <summary>
    /// Opens a read scope: until it is disposed the column's arrays cannot be freed, and
    /// <see cref="NativeStringColumnReadScope.this[long]"/> gives each row's bytes without a copy.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The column (or one of its arrays) was disposed.</exception>
    public NativeStringColumnReadScope OpenRead() => new(this);

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool IsNull(long row)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return values.IsNull(row);
    }

    /// <summary>The length in bytes of row <paramref name="row"/>'s value (0 for a null row).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public int GetByteCount(long row)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.GetByteCount(values, row);
    }

    /// <summary>Row <paramref name="row"/>'s value decoded from UTF-8, or <see langword="null"/> for a null row. Invalid UTF-8 becomes U+FFFD, as <see cref="Encoding.UTF8"/> decodes it.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidOperationException">The column holds binary values, not text: use <see cref="GetBytes"/>.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public string? GetString(long row)
    {
        VariableLengthRows.ThrowIfBinary(IsUtf8);
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.GetString(values, row);
    }

    /// <summary>A copy of row <paramref name="row"/>'s bytes, or <see langword="null"/> for a null row.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public byte[]? GetBytes(long row)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.GetBytes(values, row);
    }

    /// <summary>Copies row <paramref name="row"/>'s bytes to <paramref name="destination"/> and returns how many there were (0 for a null row).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the value.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public int CopyTo(long row, Span<byte> destination)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.CopyTo(values, row, destination);
    }

    /// <summary>Whether row <paramref name="row"/> holds exactly the bytes <paramref name="value"/> (a null row holds nothing: false).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool ValueEquals(long row, ReadOnlySpan<byte> value)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.ValueEquals(values, row, value);
    }

    /// <summary>Whether row <paramref name="row"/> holds <paramref name="value"/>, compared as UTF-8 bytes (a null row holds nothing: false; a <see langword="null"/> string matches only a null row).</summary>
    /// <inheritdoc cref="ValueEquals(long, ReadOnlySpan{byte})"/>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    public bool ValueEquals(long row, string? value)
    {
        if (value is null)
        {
            return IsNull(row);
        }

        using Utf8Text text = new(value);
        return ValueEquals(row, text.Bytes);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes start with <paramref name="prefix"/> (a null row: false).</summary>
    /// <inheritdoc cref="ValueEquals(long, ReadOnlySpan{byte})"/>
    public bool StartsWith(long row, ReadOnlySpan<byte> prefix)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.StartsWith(values, row, prefix);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes end with <paramref name="suffix"/> (a null row: false).</summary>
    /// <inheritdoc cref="ValueEquals(long, ReadOnlySpan{byte})"/>
    public bool EndsWith(long row, ReadOnlySpan<byte> suffix)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.EndsWith(values, row, suffix);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes contain <paramref name="part"/> (a null row: false).</summary>
    /// <inheritdoc cref="ValueEquals(long, ReadOnlySpan{byte})"/>
    public bool Contains(long row, ReadOnlySpan<byte> part)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.Contains(values, row, part);
    }

    /// <summary>
    /// Compares row <paramref name="row"/>'s bytes with <paramref name="value"/> byte by byte: negative,
    /// zero or positive as the row sorts before, with or after it. For UTF-8 this is the order of Unicode
    /// code points (<see cref="string.CompareOrdinal(string, string)"/> orders UTF-16 code units, which
    /// differs only for characters past U+FFFF against U+E000-U+FFFF). A null row sorts before every value.
    /// </summary>
    /// <inheritdoc cref="ValueEquals(long, ReadOnlySpan{byte})"/>
    public int CompareOrdinal(long row, ReadOnlySpan<byte> value)
    {
        using NativeStringColumnReadScope values = OpenRead();
        return VariableLengthRows.CompareOrdinal(values, row, value);
    }

    /// <summary>
    /// Frees the offsets, the data and the bitmap. Disposing again does nothing.
    /// </summary>
    /// <remarks>
    /// Every array is checked before any is freed, so a refused dispose leaves the column whole (a lease
    /// or hold another thread takes between the check and the frees can still refuse a later array's; the
    /// freed ones then throw <see cref="ObjectDisposedException"/>, and a later <c>Dispose</c> frees the rest).
    /// </remarks>
    /// <exception cref="InvalidOperationException">An array is leased, held or acquired (an open read scope, an Arrow view or export, a write); nothing was freed.</exception>
    public void Dispose()
    {
        ColumnChecks.ThrowIfInUse(Offsets, TypeName, "offsets");
        ColumnChecks.ThrowIfInUse(Data, TypeName, "data");
        if (Validity is not null)
        {
            ColumnChecks.ThrowIfInUse(Validity, TypeName, "validity bitmap");
        }

        Offsets.Dispose();
        Data.Dispose();
        Validity?.Dispose();
    }
}
