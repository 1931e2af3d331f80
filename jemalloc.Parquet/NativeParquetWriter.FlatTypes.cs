using jemalloc.AddOns;
using jemalloc.Parquet.Internal;
using ParquetSharp;

namespace jemalloc.Parquet;

// The flat types beyond plain numbers: DECIMAL, FIXED_LEN_BYTE_ARRAY (UUID), FLOAT16, DATE and TIMESTAMP.
public sealed partial class NativeParquetWriter
{
    /// <summary>
    /// Adds a DECIMAL column of the column's precision and scale, stored as the specification recommends:
    /// INT32 up to 9 digits, INT64 up to 18, FIXED_LEN_BYTE_ARRAY beyond (the fewest bytes that hold the
    /// precision). OPTIONAL when the column has a validity bitmap, REQUIRED otherwise.
    /// </summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; it must stay undisposed until <see cref="Write"/> returns.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer. (<see cref="Write"/> throws it too when a valid row's value has more digits than the precision.)</exception>
    public NativeParquetWriter Add(string name, DecimalColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        column.Values.ThrowIfInvalid();
        return AddColumn(name, column.Length, () => new DecimalWriterColumn(name, column));
    }

    /// <summary>Adds a FIXED_LEN_BYTE_ARRAY column of the column's width, written from its block without a copy; OPTIONAL when the column has a validity bitmap, REQUIRED otherwise.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; it must stay undisposed until <see cref="Write"/> returns.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public NativeParquetWriter Add(string name, FixedSizeBinaryColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        column.Data.ThrowIfInvalid();
        return AddColumn(name, column.Length, () => new FixedWidthWriterColumn<byte>(name, column.Data, column.Length, column.Validity, column.ByteWidth, LogicalType.None));
    }

    /// <summary>Adds a UUID column (FIXED_LEN_BYTE_ARRAY(16) with the UUID logical type) from a column of 16-byte values in RFC 4122 (big-endian) byte order.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column, of 16-byte values; it must stay undisposed until <see cref="Write"/> returns.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or its values are not 16 bytes.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public NativeParquetWriter AddUuid(string name, FixedSizeBinaryColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        if (column.ByteWidth != 16)
        {
            ParquetThrow.Argument(nameof(column), $"A UUID takes 16 bytes; the values of column '{name}' take {column.ByteWidth}.");
        }

        column.Data.ThrowIfInvalid();
        return AddColumn(name, column.Length, () => new FixedWidthWriterColumn<byte>(name, column.Data, column.Length, column.Validity, 16, LogicalType.Uuid));
    }

    /// <summary>Adds a DATE column (INT32: days since 1970-01-01), null where <paramref name="validity"/>'s bit is cleared.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="days">The days since the Unix epoch (negative before it).</param>
    /// <param name="validity">A validity bitmap in Arrow's layout (the column is then OPTIONAL), or <see langword="null"/> for a REQUIRED column.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="days"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="days"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public NativeParquetWriter AddDate(string name, NativeBuffer<int> days, NativeBuffer<byte>? validity = null) =>
        AddTemporal(name, days, validity, LogicalType.Date);

    /// <summary>Adds a TIMESTAMP column (INT64) of <paramref name="unit"/>s since 1970-01-01T00:00, null where <paramref name="validity"/>'s bit is cleared.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The timestamps, in <paramref name="unit"/>s since the Unix epoch.</param>
    /// <param name="unit">Milliseconds, microseconds or nanoseconds.</param>
    /// <param name="isAdjustedToUtc"><see langword="true"/> for instants (UTC); <see langword="false"/> for local date-times of no zone.</param>
    /// <param name="validity">A validity bitmap in Arrow's layout (the column is then OPTIONAL), or <see langword="null"/> for a REQUIRED column.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="unit"/> is not milliseconds, microseconds or nanoseconds.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public NativeParquetWriter AddTimestamp(string name, NativeBuffer<long> values, TimeUnit unit, bool isAdjustedToUtc = true, NativeBuffer<byte>? validity = null)
    {
        if (unit is not (TimeUnit.Millis or TimeUnit.Micros or TimeUnit.Nanos))
        {
            ParquetThrow.ArgumentOutOfRange(nameof(unit), unit, "A timestamp's unit is Millis, Micros or Nanos.");
        }

        return AddTemporal(name, values, validity, () => LogicalType.Timestamp(isAdjustedToUtc, unit));
    }

    // Half columns are FLOAT16: FIXED_LEN_BYTE_ARRAY(2), written from the array's own bytes.
    private static WriterColumn NewNumericColumn<T>(string name, NativeBuffer<T> values, long length, NativeBuffer<byte>? validity)
        where T : unmanaged, IEquatable<T> =>
        typeof(T) == typeof(Half)
            ? new FixedWidthWriterColumn<T>(name, values, length, validity, 2, LogicalType.Float16)
            : new NumericWriterColumn<T>(name, values, length, validity);

    private NativeParquetWriter AddTemporal<T>(string name, NativeBuffer<T> values, NativeBuffer<byte>? validity, Func<LogicalType> logicalType)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(values);
        _guard.Enter(TypeName);
        try
        {
            long length = LengthOf(values);
            CheckName(name, length);
            if (validity is not null && LengthOf(validity) < ValidityBitmap.BytesFor(length))
            {
                ParquetThrow.Argument(nameof(validity), $"A validity bitmap for {length:N0} rows needs {ValidityBitmap.BytesFor(length):N0} bytes; this one has {LengthOf(validity):N0}.");
            }

            _columns.Add(new NumericWriterColumn<T>(name, values, length, validity, logicalType));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    private NativeParquetWriter AddColumn(string name, long length, Func<WriterColumn> create)
    {
        _guard.Enter(TypeName);
        try
        {
            CheckName(name, length);
            _columns.Add(create());
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }
}
