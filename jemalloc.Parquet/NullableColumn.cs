using jemalloc.AddOns;
using jemalloc.Parquet.Internal;

namespace jemalloc.Parquet;

/// <summary>
/// A column that may hold nulls: its values in one native array and, beside it, a validity bitmap in
/// Arrow's layout (bit <c>i % 8</c> of byte <c>i / 8</c> is set when row <c>i</c> has a value). A null
/// row's value is <see langword="default"/>. Disposing the column frees both arrays.
/// </summary>
/// <remarks>
/// The column keeps its own row count, <see cref="Length"/>: <see cref="Values"/> and
/// <see cref="Validity"/> may hold more elements than it needs, and an empty column (a Parquet file
/// without rows) keeps one element in each, since a native array has at least one. Read
/// <see cref="Length"/> rows, not <c>Values.Length</c>.
/// </remarks>
/// <typeparam name="T">The element type.</typeparam>
public sealed class NullableColumn<T> : IDisposable
    where T : unmanaged, IEquatable<T>
{
    /// <summary>
    /// Wraps values and a validity bitmap the caller made; the column owns both from here on and
    /// counts the nulls once.
    /// </summary>
    /// <param name="values">The values, one per row.</param>
    /// <param name="validity">The bitmap: at least <c>(values.Length + 7) / 8</c> bytes; bits past the last row are ignored.</param>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> or <paramref name="validity"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="validity"/> is too short for <paramref name="values"/>, or is the same array.</exception>
    /// <exception cref="ObjectDisposedException">Either array was disposed.</exception>
    public NullableColumn(HugeArray<T> values, HugeArray<byte> validity)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(validity);
        values.ThrowIfInvalid();
        validity.ThrowIfInvalid();
        if (ReferenceEquals(values, validity))
        {
            ParquetThrow.Argument(nameof(validity), "The validity bitmap must be an array of its own.");
        }

        if (validity.Length < ValidityBitmap.BytesFor(values.Length))
        {
            ParquetThrow.Argument(nameof(validity), $"A validity bitmap for {values.Length:N0} rows needs {ValidityBitmap.BytesFor(values.Length):N0} bytes; this one has {validity.Length:N0}.");
        }

        Values = values;
        Validity = validity;
        Length = values.Length;
        NullCount = values.Length - CountValid(validity, values.Length);
    }

    // A column the reader made: length rows (zero for a file without rows) over arrays of at least one element.
    internal NullableColumn(HugeArray<T> values, HugeArray<byte> validity, long length, long nullCount)
    {
        Values = values;
        Validity = validity;
        Length = length;
        NullCount = nullCount;
    }

    /// <summary>The values; a null row holds <see langword="default"/>. It may hold more elements than <see cref="Length"/> (see the remarks).</summary>
    public HugeArray<T> Values { get; }

    /// <summary>The validity bitmap (Arrow's layout): bit <c>i % 8</c> of byte <c>i / 8</c> is set when row <c>i</c> has a value; bits past <see cref="Length"/> mean nothing.</summary>
    public HugeArray<byte> Validity { get; }

    /// <summary>The number of rows: the length of the values given to the constructor, or the rows the reader read (zero for a file without rows).</summary>
    public long Length { get; }

    /// <summary>How many rows are null, counted when the column was made: a bit of <see cref="Validity"/> changed afterwards is not counted again here (a <see cref="NativeParquetWriter"/> counts the bitmap as it writes it).</summary>
    public long NullCount { get; }

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public bool IsNull(long row)
    {
        if ((ulong)row >= (ulong)Length)
        {
            ParquetThrow.ArgumentOutOfRange(nameof(row), row, $"The column has {Length:N0} rows.");
        }

        return (Validity[row >> 3] & (1 << (int)(row & 7))) == 0;
    }

    /// <summary>Frees the values and the bitmap. Disposing again does nothing.</summary>
    /// <remarks>
    /// Both arrays are checked before either is freed, so a refused dispose leaves the column whole. A
    /// lease, hold or acquisition that another thread takes between the check and the frees can still
    /// refuse the second array's; it stays valid, the freed one throws <see cref="ObjectDisposedException"/>,
    /// and a later <c>Dispose</c> frees the rest.
    /// </remarks>
    /// <exception cref="InvalidOperationException">Either array is leased, held or acquired (a view, a write, a lease); nothing was freed.</exception>
    public void Dispose()
    {
        ThrowIfInUse(Values, "values");
        ThrowIfInUse(Validity, "validity bitmap");
        Values.Dispose();
        Validity.Dispose();
    }

    private static void ThrowIfInUse<TElement>(HugeArray<TElement> array, string what)
        where TElement : unmanaged, IEquatable<TElement>
    {
        int acquired = array.AcquireCount;
        int leased = array.Handle.LeaseCount;
        if (acquired > 0 || leased > 0)
        {
            ParquetThrow.InvalidOperation($"The column's {what} cannot be disposed: it is acquired {acquired} and leased or held {leased} time(s) (a view, a write, a lease or a hold of it is open). Nothing was freed.");
        }
    }

    private static unsafe long CountValid(HugeArray<byte> validity, long rows)
    {
        using MemoryLease<byte> lease = validity.Lease();
        return ValidityBitmap.CountSet((byte*)lease.Pointer, rows);
    }
}
