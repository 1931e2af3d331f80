using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A column of values of one fixed size in bytes (Parquet's FIXED_LEN_BYTE_ARRAY, Arrow's
/// FixedSizeBinary): row <c>i</c>'s value is bytes <c>[i * ByteWidth, (i + 1) * ByteWidth)</c> of
/// <see cref="Data"/>, with an optional validity bitmap in Arrow's layout. UUIDs are such a column of
/// 16-byte values (<see cref="GetGuid"/>).
/// </summary>
/// <remarks>
/// <para>
/// A column has <see cref="Length"/> rows, which may be fewer than its arrays hold: a native array holds
/// at least one element, so a column of no rows is <see cref="Length"/> 0 over one-element arrays. A null
/// row's bytes are whatever the block holds there (zeros in a column the Parquet add-on read).
/// </para>
/// <para>
/// Values are copied out (<see cref="CopyValue"/>) or compared in place (<see cref="ValueEquals"/>); a span
/// over the block itself comes only from a lease of <see cref="Data"/>, which holds the memory while it is
/// open. The column owns both arrays: <see cref="Dispose"/> frees them, and refuses, freeing nothing, while
/// either is leased, held or acquired.
/// </para>
/// </remarks>
public sealed class FixedSizeBinaryColumn : IDisposable
{
    private const string TypeName = nameof(FixedSizeBinaryColumn);
    private const int GuidBytes = 16;

    private int _disposed;

    /// <summary>
    /// Wraps a data block and an optional validity bitmap the caller made; the column owns both from
    /// here on and counts the nulls once.
    /// </summary>
    /// <param name="data">The values, row after row: at least <paramref name="length"/> * <paramref name="byteWidth"/> bytes.</param>
    /// <param name="validity">The validity bitmap (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), at least <c>(length + 7) / 8</c> bytes (and one); <see langword="null"/> when no row is null.</param>
    /// <param name="length">The number of rows.</param>
    /// <param name="byteWidth">The size of every value, in bytes: at least 1.</param>
    /// <exception cref="ArgumentNullException"><paramref name="data"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="byteWidth"/> is less than 1, or <paramref name="length"/> is negative or needs more bytes than <paramref name="data"/> holds.</exception>
    /// <exception cref="ArgumentException"><paramref name="validity"/> is too short, or is <paramref name="data"/> itself.</exception>
    /// <exception cref="ObjectDisposedException">An array was disposed.</exception>
    public FixedSizeBinaryColumn(HugeArray<byte> data, HugeArray<byte>? validity, long length, int byteWidth)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(byteWidth, 1);
        NullCount = ColumnParts.Check(data, validity, length, byteWidth, "data");
        Data = data;
        Validity = validity;
        Length = length;
        ByteWidth = byteWidth;
    }

    /// <summary>The values, row after row, <see cref="ByteWidth"/> bytes each.</summary>
    public HugeArray<byte> Data { get; }

    /// <summary>The validity bitmap (Arrow's layout), or <see langword="null"/> when the column has no nulls.</summary>
    public HugeArray<byte>? Validity { get; }

    /// <summary>The number of rows (the arrays may hold more).</summary>
    public long Length { get; }

    /// <summary>The size of every value, in bytes.</summary>
    public int ByteWidth { get; }

    /// <summary>How many rows are null, counted when the column was made.</summary>
    public long NullCount { get; }

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <param name="row">The row.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool IsNull(long row)
    {
        ColumnParts.CheckRow(row, Length);
        Data.ThrowIfInvalid();
        return ColumnParts.IsNull(Validity, row);
    }

    /// <summary>Copies row <paramref name="row"/>'s <see cref="ByteWidth"/> bytes into <paramref name="destination"/>.</summary>
    /// <param name="row">The row.</param>
    /// <param name="destination">Where the bytes go: at least <see cref="ByteWidth"/> bytes.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <see cref="ByteWidth"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public void CopyValue(long row, Span<byte> destination)
    {
        ColumnParts.CheckRow(row, Length);
        if (destination.Length < ByteWidth)
        {
            ThrowHelper.ThrowArgument(nameof(destination), $"A value of this column takes {ByteWidth} bytes; the destination has {destination.Length}.");
        }

        Data.CopyTo(destination[..ByteWidth], row * ByteWidth);
    }

    /// <summary>Whether row <paramref name="row"/>'s bytes are <paramref name="value"/>'s, compared in place.</summary>
    /// <param name="row">The row.</param>
    /// <param name="value">The bytes to compare with; a span of another length is never equal.</param>
    /// <returns><see langword="true"/> when the bytes are equal (a null row compares its stored bytes).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool ValueEquals(long row, ReadOnlySpan<byte> value)
    {
        ColumnParts.CheckRow(row, Length);
        using MemoryLease<byte> lease = Data.Lease();
        return value.Length == ByteWidth && lease.AsSpan(row * ByteWidth, ByteWidth).SequenceEqual(value);
    }

    /// <summary>Row <paramref name="row"/>'s 16 bytes as a <see cref="Guid"/>, read in RFC 4122 (big-endian) byte order, the order Parquet's UUID type stores.</summary>
    /// <param name="row">The row.</param>
    /// <exception cref="InvalidOperationException"><see cref="ByteWidth"/> is not 16.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public Guid GetGuid(long row)
    {
        if (ByteWidth != GuidBytes)
        {
            ThrowHelper.ThrowInvalidOperation($"A UUID takes 16 bytes; this column's values take {ByteWidth}.");
        }

        Span<byte> bytes = stackalloc byte[GuidBytes];
        CopyValue(row, bytes);
        return new Guid(bytes, bigEndian: true);
    }

    /// <summary>Frees the data and the bitmap. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">An array is leased, held or acquired (a view, a write, a lease); nothing was freed.</exception>
    public void Dispose() => ColumnParts.Dispose(ref _disposed, Data, Validity, TypeName, "data");
}
