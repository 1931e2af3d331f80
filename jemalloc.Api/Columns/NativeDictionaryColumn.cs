using System.Text;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A column of variable-length values, UTF-8 strings or binary, dictionary-encoded in Apache Arrow's
/// layout: each distinct value is held once in <see cref="Dictionary"/> (a <see cref="NativeStringColumn"/>),
/// and each row holds the 32-bit index of its value in <see cref="Indices"/>, with an optional validity
/// bitmap. A column of ten million rows and a few thousand distinct values takes 40 MB of indices and the
/// distinct values' bytes, where the plain layout takes every row's bytes and an 8-byte offset per row. A
/// column may hold more than 2^31 rows.
/// </summary>
/// <remarks>
/// <para>
/// It reads as a <see cref="NativeStringColumn"/> does: <c>using var values = column.OpenRead();</c> and
/// <c>values[row]</c> is the row's bytes as a <see cref="ReadOnlySpan{T}"/> under the scope; the comparisons
/// and searches work on the UTF-8 bytes without decoding them. The whole-column searches
/// (<see cref="IndexOf(ReadOnlySpan{byte}, long)"/>, <see cref="CountStartsWith"/>,
/// <see cref="SelectStartsWith"/>, ...) test each dictionary value once and then only map the rows' indices.
/// <see cref="GetIndex"/> gives a row's index, so a group-by can count by index instead of by value.
/// </para>
/// <para>
/// The column owns its indices, bitmap and dictionary and frees them in <see cref="Dispose"/>. They are
/// public so that the add-ons can hand them to Arrow, Parquet or native code without a copy; every read
/// checks the index it uses against the dictionary's length, so an index changed through
/// <see cref="Indices"/> gives an <see cref="InvalidDataException"/>, never a read outside the dictionary.
/// A null row's index is not used (Arrow lets it be anything). Reads may run on any number of threads at once.
/// </para>
/// </remarks>
public sealed partial class NativeDictionaryColumn : IDisposable
{
    private const string TypeName = nameof(NativeDictionaryColumn);

    private int _disposed;

    /// <summary>
    /// Takes ownership of the arrays of a dictionary-encoded column, after checking that they describe
    /// one: <paramref name="indices"/> holds at least <paramref name="length"/> indices, and every row that
    /// is not null has an index of a value of <paramref name="dictionary"/>; <paramref name="validity"/>,
    /// when given, holds a bit per row; the dictionary has no null value.
    /// </summary>
    /// <param name="indices">Row <c>i</c>'s value is the dictionary's value <c>indices[i]</c>.</param>
    /// <param name="validity">Arrow's validity bitmap (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), or <see langword="null"/> when no row is null.</param>
    /// <param name="dictionary">The distinct values (they need not be distinct: several indices may name equal values).</param>
    /// <param name="length">The number of rows.</param>
    /// <exception cref="ArgumentNullException"><paramref name="indices"/> or <paramref name="dictionary"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative or more than <paramref name="indices"/> holds.</exception>
    /// <exception cref="ArgumentException">A row's index is not one of the dictionary's; <paramref name="validity"/> is too short or is one of the dictionary's arrays; or the dictionary has a null value.</exception>
    /// <exception cref="ObjectDisposedException">An array, or the dictionary, was disposed.</exception>
    public NativeDictionaryColumn(HugeArray<int> indices, HugeArray<byte>? validity, NativeStringColumn dictionary, long length)
    {
        ArgumentNullException.ThrowIfNull(indices);
        ArgumentNullException.ThrowIfNull(dictionary);
        // The checks below read only the dictionary's length: a disposed one must be refused here, not at the first read.
        dictionary.Offsets.ThrowIfInvalid();
        dictionary.Data.ThrowIfInvalid();
        if (validity is not null && (ReferenceEquals(validity, dictionary.Data) || ReferenceEquals(validity, dictionary.Validity)))
        {
            ThrowHelper.ThrowArgument(nameof(validity), "The validity bitmap must be an array of its own, not one of the dictionary's.");
        }

        if (dictionary.NullCount > 0)
        {
            ThrowHelper.ThrowArgument(nameof(dictionary), $"The dictionary has {dictionary.NullCount:N0} null value(s); a dictionary column marks null rows in its own validity bitmap, and its dictionary has none.");
        }

        if (dictionary.Length > int.MaxValue)
        {
            ThrowHelper.ThrowArgument(nameof(dictionary), $"The dictionary has {dictionary.Length:N0} values, more than 32-bit indices can name.");
        }

        Indices = indices;
        Validity = validity;
        Dictionary = dictionary;
        Length = length;
        NullCount = ColumnParts.Check(indices, validity, length, 1, "indices");
        CheckIndices();
    }

    /// <summary>The number of rows.</summary>
    public long Length { get; }

    /// <summary>How many rows are null, counted when the column was made.</summary>
    public long NullCount { get; }

    /// <summary>Whether the values are UTF-8 text; otherwise binary (the dictionary's <see cref="NativeStringColumn.IsUtf8"/>).</summary>
    public bool IsUtf8 => Dictionary.IsUtf8;

    /// <summary>Each row's index in <see cref="Dictionary"/>, <see cref="Length"/> of them used (the array may be longer).</summary>
    public HugeArray<int> Indices { get; }

    /// <summary>The validity bitmap in Arrow's layout, or <see langword="null"/> when no row is null.</summary>
    public HugeArray<byte>? Validity { get; }

    /// <summary>The values the indices name; the column owns it and disposes it with itself.</summary>
    public NativeStringColumn Dictionary { get; }

    /// <summary>
    /// Opens a read scope: until it is disposed the column's arrays cannot be freed, and
    /// <see cref="NativeDictionaryColumnReadScope.this[long]"/> gives each row's bytes without a copy.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The column (or one of its arrays) was disposed.</exception>
    public NativeDictionaryColumnReadScope OpenRead() => new(this);

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool IsNull(long row)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return values.IsNull(row);
    }

    /// <summary>Row <paramref name="row"/>'s index in <see cref="Dictionary"/>, or -1 for a null row.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's index is not one of the dictionary's (it was changed after the column was made).</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public int GetIndex(long row)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return values.GetIndex(row);
    }

    /// <summary>The length in bytes of row <paramref name="row"/>'s value (0 for a null row).</summary>
    /// <inheritdoc cref="GetIndex"/>
    public int GetByteCount(long row)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.GetByteCount(values, row);
    }

    /// <summary>Row <paramref name="row"/>'s value decoded from UTF-8, or <see langword="null"/> for a null row. Invalid UTF-8 becomes U+FFFD, as <see cref="Encoding.UTF8"/> decodes it.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidOperationException">The column holds binary values, not text: use <see cref="GetBytes"/>.</exception>
    /// <exception cref="InvalidDataException">The row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public string? GetString(long row)
    {
        VariableLengthRows.ThrowIfBinary(IsUtf8);
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.GetString(values, row);
    }

    /// <summary>A copy of row <paramref name="row"/>'s bytes, or <see langword="null"/> for a null row.</summary>
    /// <inheritdoc cref="GetIndex"/>
    public byte[]? GetBytes(long row)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.GetBytes(values, row);
    }

    /// <summary>Copies row <paramref name="row"/>'s bytes to <paramref name="destination"/> and returns how many there were (0 for a null row).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the value.</exception>
    /// <exception cref="InvalidDataException">The row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public int CopyTo(long row, Span<byte> destination)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.CopyTo(values, row, destination);
    }

    /// <summary>Whether row <paramref name="row"/> holds exactly the bytes <paramref name="value"/> (a null row holds nothing: false).</summary>
    /// <inheritdoc cref="GetIndex"/>
    public bool ValueEquals(long row, ReadOnlySpan<byte> value)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.ValueEquals(values, row, value);
    }

    /// <summary>Whether row <paramref name="row"/> holds <paramref name="value"/>, compared as UTF-8 bytes (a null row holds nothing: false; a <see langword="null"/> string matches only a null row).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    /// <exception cref="InvalidDataException">The row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
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
    /// <inheritdoc cref="GetIndex"/>
    public bool StartsWith(long row, ReadOnlySpan<byte> prefix)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.StartsWith(values, row, prefix);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes end with <paramref name="suffix"/> (a null row: false).</summary>
    /// <inheritdoc cref="GetIndex"/>
    public bool EndsWith(long row, ReadOnlySpan<byte> suffix)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.EndsWith(values, row, suffix);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes contain <paramref name="part"/> (a null row: false).</summary>
    /// <inheritdoc cref="GetIndex"/>
    public bool Contains(long row, ReadOnlySpan<byte> part)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.Contains(values, row, part);
    }

    /// <summary>
    /// Compares row <paramref name="row"/>'s bytes with <paramref name="value"/> byte by byte: negative,
    /// zero or positive as the row sorts before, with or after it (for UTF-8, the order of Unicode code
    /// points, as <see cref="NativeStringColumn.CompareOrdinal"/>). A null row sorts before every value.
    /// </summary>
    /// <inheritdoc cref="GetIndex"/>
    public int CompareOrdinal(long row, ReadOnlySpan<byte> value)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        return VariableLengthRows.CompareOrdinal(values, row, value);
    }

    /// <summary>
    /// Expands the column into the plain layout: a new <see cref="NativeStringColumn"/> holding every row's
    /// bytes, with the same nulls, allocated as the library chooses. This column is unchanged.
    /// </summary>
    /// <returns>A new column, which the caller owns.</returns>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="OutOfMemoryException">The new column cannot be allocated; nothing is left allocated.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public NativeStringColumn ToStringColumn() => Expand(null);

    /// <summary>Expands the column into the plain layout, allocated with <paramref name="options"/>.</summary>
    /// <param name="options">How the new column's blocks are allocated.</param>
    /// <inheritdoc cref="ToStringColumn()"/>
    public NativeStringColumn ToStringColumn(AllocationOptions options) => Expand(options);

    /// <summary>
    /// Frees the indices, the bitmap and the dictionary. Disposing again does nothing.
    /// </summary>
    /// <remarks>
    /// Every array, the dictionary's included, is checked before any is freed, so a refused dispose leaves
    /// the column whole (a lease another thread takes between the check and the frees can still refuse a
    /// later array's; the freed ones then throw <see cref="ObjectDisposedException"/>, and a later
    /// <c>Dispose</c> frees the rest).
    /// </remarks>
    /// <exception cref="InvalidOperationException">An array is leased, held or acquired (an open read scope, an Arrow view or export, a write); nothing was freed.</exception>
    public void Dispose()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            return;
        }

        if (Indices.IsValid)
        {
            ColumnChecks.ThrowIfInUse(Indices, TypeName, "indices");
        }

        if (Validity is { IsValid: true })
        {
            ColumnChecks.ThrowIfInUse(Validity, TypeName, "validity bitmap");
        }

        if (Dictionary.Offsets.IsValid)
        {
            ColumnChecks.ThrowIfInUse(Dictionary.Offsets, TypeName, "dictionary's offsets");
        }

        if (Dictionary.Data.IsValid)
        {
            ColumnChecks.ThrowIfInUse(Dictionary.Data, TypeName, "dictionary's data");
        }

        if (Dictionary.Validity is { IsValid: true })
        {
            ColumnChecks.ThrowIfInUse(Dictionary.Validity, TypeName, "dictionary's validity bitmap");
        }

        // Marked disposed only once everything is freed: a lease taken between the checks and the frees
        // refuses a later array's free, and a later Dispose must still free the rest.
        Indices.Dispose();
        Validity?.Dispose();
        Dictionary.Dispose();
        Volatile.Write(ref _disposed, 1);
    }

    private unsafe void CheckIndices()
    {
        using MemoryLease<int> lease = Indices.Lease();
        int* indices = (int*)lease.Pointer;
        uint limit = (uint)Dictionary.Length;
        long bad = ColumnChecks.FirstIndexNotBelow(indices, Length, limit);
        if (bad < 0)
        {
            return;
        }

        // Out of range is allowed only where the row is null.
        using MemoryLease<byte> bits = Validity is null ? default : Validity.Lease();
        byte* valid = Validity is null ? null : (byte*)bits.Pointer;
        for (long row = bad; row < Length; row++)
        {
            if ((uint)indices[row] >= limit && (valid == null || ((valid[row >> 3] >> (int)(row & 7)) & 1) != 0))
            {
                ThrowHelper.ThrowArgument("indices", $"Row {row:N0}'s index is {indices[row]:N0}; the dictionary has {limit:N0} values.");
            }
        }
    }

    private NativeStringColumn Expand(AllocationOptions? options)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        using NativeStringColumnBuilder builder = options is { } o ? new NativeStringColumnBuilder(IsUtf8, o) : new NativeStringColumnBuilder(IsUtf8);
        for (long row = 0; row < Length; row++)
        {
            if (values.IsNull(row))
            {
                builder.AppendNull();
            }
            else
            {
                builder.Append(values[row]);
            }
        }

        return builder.Build();
    }
}
