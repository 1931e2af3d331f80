using Apache.Arrow.Types;

namespace jemalloc.Arrow;

/// <summary>The library's column types (<see cref="DecimalColumn"/>, <see cref="FixedSizeBinaryColumn"/>) as Apache Arrow arrays, with no copy.</summary>
public static class ColumnArrowExtensions
{
    /// <summary>
    /// The column as Arrow <see cref="Decimal128Type"/> arrays of its precision and scale, whose value buffers are
    /// the column's <see cref="DecimalColumn.Values"/> block itself (an <see cref="Int128"/> has decimal128's
    /// little-endian layout) and whose validity buffers are its bitmap, in chunks of at most
    /// <paramref name="maxChunkLength"/> rows (by default, 1 GiB of values).
    /// </summary>
    /// <param name="column">The column; its arrays are held until the returned view is disposed (so the column cannot be disposed meanwhile).</param>
    /// <param name="maxChunkLength">The most rows per chunk, a multiple of 8 when the column has a bitmap; 0 for the default.</param>
    /// <returns>The Arrow view, which the caller disposes; a column of no rows is one empty array.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative, or its values take more than 2 GiB.</exception>
    /// <exception cref="ArgumentException"><paramref name="maxChunkLength"/> is not a multiple of 8 and the column has a bitmap.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">An array is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow(this DecimalColumn column, int maxChunkLength = 0)
    {
        ArgumentNullException.ThrowIfNull(column);
        var type = new Decimal128Type(column.Precision, column.Scale);
        int chunk = ChunkLength(maxChunkLength, 16, column.Validity is not null);
        return NativeArrowColumn.Create(column.Values, column.Validity, column.Length, type, 16, chunk);
    }

    /// <summary>
    /// The column as Arrow <see cref="FixedSizeBinaryType"/> arrays of its width, whose value buffers are the
    /// column's <see cref="FixedSizeBinaryColumn.Data"/> block itself and whose validity buffers are its
    /// bitmap, in chunks of at most <paramref name="maxChunkLength"/> rows (by default, about 1 GiB of values).
    /// </summary>
    /// <param name="column">The column; its arrays are held until the returned view is disposed (so the column cannot be disposed meanwhile).</param>
    /// <param name="maxChunkLength">The most rows per chunk, a multiple of 8 when the column has a bitmap; 0 for the default.</param>
    /// <returns>The Arrow view, which the caller disposes; a column of no rows is one empty array.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative, or its values take more than 2 GiB.</exception>
    /// <exception cref="ArgumentException"><paramref name="maxChunkLength"/> is not a multiple of 8 and the column has a bitmap.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">An array is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow(this FixedSizeBinaryColumn column, int maxChunkLength = 0)
    {
        ArgumentNullException.ThrowIfNull(column);
        var type = new FixedSizeBinaryType(column.ByteWidth);
        int chunk = ChunkLength(maxChunkLength, column.ByteWidth, column.Validity is not null);
        return NativeArrowColumn.Create(column.Data, column.Validity, column.Length, type, column.ByteWidth, chunk);
    }

    private static int ChunkLength(int maxChunkLength, int elementSize, bool nullable)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxChunkLength);
        if (maxChunkLength == 0)
        {
            // A multiple of 8 rows, so each chunk's bitmap starts on a byte.
            return Math.Max(8, ((1 << 30) / elementSize) & ~7);
        }

        if ((long)maxChunkLength * elementSize > int.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(maxChunkLength), maxChunkLength, $"A chunk of {maxChunkLength:N0} values of {elementSize} bytes takes more than 2 GiB, an Arrow buffer's limit.");
        }

        if (nullable && maxChunkLength % 8 != 0)
        {
            throw new ArgumentException($"With a validity bitmap the chunk length must be a multiple of 8 (so each chunk's bitmap starts on a byte); {maxChunkLength:N0} is not.", nameof(maxChunkLength));
        }

        return maxChunkLength;
    }
}
