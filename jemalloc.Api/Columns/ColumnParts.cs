using jemalloc.Internal;

namespace jemalloc.Columns;

/// <summary>
/// What the fixed-width columns (<see cref="DecimalColumn"/>, <see cref="FixedSizeBinaryColumn"/>) share:
/// the checks of their arrays, the validity bitmap (Arrow's layout: bit <c>i % 8</c> of byte <c>i / 8</c>
/// set when row <c>i</c> has a value), and the dispose that frees nothing unless it can free everything.
/// The checks every column type makes are <see cref="ColumnChecks"/>'.
/// </summary>
internal static unsafe class ColumnParts
{
    /// <summary>Checks a column's row count against its data array and its bitmap; returns the null count the bitmap gives.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="data"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative or needs more than <paramref name="data"/> holds.</exception>
    /// <exception cref="ArgumentException"><paramref name="validity"/> is too short, or is <paramref name="data"/> itself.</exception>
    /// <exception cref="ObjectDisposedException">An array was disposed.</exception>
    internal static long Check<T>(HugeArray<T> data, HugeArray<byte>? validity, long length, long elementsPerRow, string dataName)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(data, dataName);
        data.ThrowIfInvalid();
        if (length < 0 || length > data.Length / elementsPerRow)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, $"The column's {dataName} array ({data.Length:N0} elements, {elementsPerRow} a row) holds at most {data.Length / elementsPerRow:N0} rows.");
        }

        if (validity is null)
        {
            return 0;
        }

        validity.ThrowIfInvalid();
        if (ReferenceEquals(validity, data))
        {
            ThrowHelper.ThrowArgument(nameof(validity), "The validity bitmap must be an array of its own.");
        }

        if (validity.Length < ColumnChecks.BitmapBytes(length))
        {
            ThrowHelper.ThrowArgument(nameof(validity), $"A validity bitmap for {length:N0} rows needs {ColumnChecks.BitmapBytes(length):N0} bytes; this one has {validity.Length:N0}.");
        }

        using MemoryLease<byte> bits = validity.Lease();
        return length - ColumnChecks.CountSet((byte*)bits.Pointer, length);
    }

    /// <summary>Throws unless <paramref name="row"/> is one of <paramref name="length"/> rows.</summary>
    /// <exception cref="ArgumentOutOfRangeException">It is not.</exception>
    internal static void CheckRow(long row, long length)
    {
        if ((ulong)row >= (ulong)length)
        {
            ThrowRow(row, length);
        }
    }

    /// <summary>Whether the bitmap's bit for <paramref name="row"/> is cleared; no bitmap: never.</summary>
    /// <exception cref="ObjectDisposedException">The bitmap was disposed.</exception>
    internal static bool IsNull(HugeArray<byte>? validity, long row) =>
        validity is not null && (validity[row >> 3] & (1 << (int)(row & 7))) == 0;

    /// <summary>
    /// Frees both arrays once neither is leased, held or acquired; otherwise frees nothing and throws.
    /// Does nothing when the column was disposed before.
    /// </summary>
    /// <exception cref="InvalidOperationException">An array is in use.</exception>
    internal static void Dispose<T>(ref int disposed, HugeArray<T> data, HugeArray<byte>? validity, string typeName, string dataName)
        where T : unmanaged, IEquatable<T>
    {
        if (Volatile.Read(ref disposed) != 0)
        {
            return;
        }

        ThrowIfInUse(data, typeName, dataName);
        if (validity is not null)
        {
            ThrowIfInUse(validity, typeName, "validity bitmap");
        }

        if (Interlocked.Exchange(ref disposed, 1) != 0)
        {
            return;
        }

        data.Dispose();
        validity?.Dispose();
    }

    private static void ThrowIfInUse<T>(HugeArray<T> array, string typeName, string what)
        where T : unmanaged, IEquatable<T>
    {
        // An array disposed through the property has nothing left to free, nor anything to refuse.
        if (array.IsValid)
        {
            ColumnChecks.ThrowIfInUse(array, typeName, what);
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowRow(long row, long length) =>
        ThrowHelper.ThrowArgumentOutOfRange(nameof(row), row, $"The column has {length:N0} rows.");
}
