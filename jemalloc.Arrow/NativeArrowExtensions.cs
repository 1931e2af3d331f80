namespace jemalloc.Arrow;

/// <summary>Native columns as Apache Arrow arrays, with no copy.</summary>
public static class NativeArrowExtensions
{
    /// <summary>
    /// The column as Arrow arrays whose value buffers are <paramref name="values"/>' native block
    /// itself, in chunks of at most <paramref name="maxChunkLength"/> rows (by default, 1 GiB of values).
    /// </summary>
    /// <typeparam name="T">sbyte, byte, short, ushort, int, uint, long, ulong, Half, float or double.</typeparam>
    /// <param name="values">A <see cref="HugeArray{T}"/> or <see cref="SafeArray{T}"/>; held until the returned column is disposed.</param>
    /// <param name="maxChunkLength">The most rows per chunk; 0 for the default. A chunk's values must fit in 2 GiB (an Arrow buffer's limit).</param>
    /// <returns>The Arrow view, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative, or its values take more than 2 GiB.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> has no Arrow primitive type of its layout.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException"><paramref name="values"/> is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow<T>(this NativeBuffer<T> values, int maxChunkLength = 0)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(values);
        return NativeArrowColumn.Create(values, null, ChunkLength<T>(maxChunkLength, nullable: false));
    }

    /// <summary>
    /// The column as Arrow arrays whose value and validity buffers are the native blocks themselves,
    /// null where <paramref name="validity"/>'s bit is cleared.
    /// </summary>
    /// <typeparam name="T">sbyte, byte, short, ushort, int, uint, long, ulong, Half, float or double.</typeparam>
    /// <param name="values">The values; held until the returned column is disposed.</param>
    /// <param name="validity">The validity bitmap in Arrow's layout (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), at least <c>(rows + 7) / 8</c> bytes; held likewise.</param>
    /// <param name="maxChunkLength">The most rows per chunk, a multiple of 8 (so each chunk's bitmap starts on a byte); 0 for the default.</param>
    /// <returns>The Arrow view, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> or <paramref name="validity"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="validity"/> is too short, or <paramref name="maxChunkLength"/> is not a multiple of 8.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative, or its values take more than 2 GiB.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> has no Arrow primitive type of its layout.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">A structure is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow<T>(this NativeBuffer<T> values, NativeBuffer<byte> validity, int maxChunkLength = 0)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(validity);
        return NativeArrowColumn.Create(values, validity, ChunkLength<T>(maxChunkLength, nullable: true));
    }

    /// <summary>
    /// The string or binary column as Arrow arrays whose data buffer is the column's own block: utf8 or
    /// binary for a text or binary column with 32-bit offsets, or large_utf8 or large_binary with 64-bit ones.
    /// </summary>
    /// <remarks>
    /// The values' bytes are not copied. The offsets are: each is read once from the column, checked (not
    /// below the one before, not past the data block) and written, rebased to its chunk, into a block the
    /// view owns (8 or 4 bytes a row). So nothing Arrow or a C consumer of an export reads through them can
    /// leave the data block, whatever happens to the column's offsets during or after this call. A chunk's
    /// buffers stay within Arrow's 2 GiB, so a larger column is several chunks. The validity bitmap is the
    /// column's own; each chunk's null count is counted when the view is made.
    /// </remarks>
    /// <param name="column">The column; its arrays are held until the returned view is disposed.</param>
    /// <param name="largeOffsets">Whether to show it as large_utf8/large_binary (64-bit offsets) rather than utf8/binary.</param>
    /// <param name="maxChunkLength">The most rows per chunk, a multiple of 8 when the column has nulls; 0 for as many as the buffers allow.</param>
    /// <returns>The Arrow view, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative.</exception>
    /// <exception cref="ArgumentException">The column's offsets do not describe bytes inside its data block (they were changed after it was made); a chunk's values need more than 32-bit offsets address; or <paramref name="maxChunkLength"/> is not a multiple of 8 for a column with nulls.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">An array of the column is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow(this NativeStringColumn column, bool largeOffsets = true, int maxChunkLength = 0)
    {
        ArgumentNullException.ThrowIfNull(column);
        ArgumentOutOfRangeException.ThrowIfNegative(maxChunkLength);
        if (maxChunkLength % 8 != 0 && column.Validity is not null)
        {
            throw new ArgumentException($"With a validity bitmap the chunk length must be a multiple of 8 (so each chunk's bitmap starts on a byte); {maxChunkLength:N0} is not.", nameof(maxChunkLength));
        }

        return NativeArrowColumn.CreateStrings(column, largeOffsets, maxChunkLength == 0 ? long.MaxValue : maxChunkLength, nameof(column));
    }

    /// <summary>
    /// The column as Arrow dictionary arrays (int32 indices; utf8/binary values, or their large variants),
    /// whose index buffers are the column's <see cref="NativeDictionaryColumn.Indices"/> block itself (no copy)
    /// and whose validity buffers are its bitmap, in chunks of at most <paramref name="maxChunkLength"/> rows
    /// sharing one dictionary array, made from <see cref="NativeDictionaryColumn.Dictionary"/> as
    /// <see cref="ToArrow(NativeStringColumn, bool, int)"/> makes a string column's.
    /// </summary>
    /// <remarks>
    /// Every index of a row that is not null is checked against the dictionary when the view is made.
    /// The index buffers are not copies: an index the caller changes afterwards is what Arrow, or a C
    /// consumer of an export, reads, and Arrow's readers do not check indices. Do not write
    /// <see cref="NativeDictionaryColumn.Indices"/> while a view or export of the column is open.
    /// </remarks>
    /// <param name="column">The column; its arrays are held until the returned view is disposed.</param>
    /// <param name="largeOffsets">Whether to show the dictionary as large_utf8/large_binary (64-bit offsets) rather than utf8/binary.</param>
    /// <param name="maxChunkLength">The most rows per chunk, a multiple of 8 when the column has nulls; 0 for 2^28 rows (1 GiB of indices).</param>
    /// <returns>The Arrow view, which the caller disposes; a column of no rows is one empty array.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is negative.</exception>
    /// <exception cref="ArgumentException">A row's index names no dictionary value, or the dictionary's offsets were changed (both after the column was made); the dictionary's values need more than one Arrow buffer; or <paramref name="maxChunkLength"/> is not a multiple of 8 for a column with nulls.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">An array of the column is already held the most times it can be.</exception>
    public static NativeArrowColumn ToArrow(this NativeDictionaryColumn column, bool largeOffsets = true, int maxChunkLength = 0)
    {
        ArgumentNullException.ThrowIfNull(column);
        int chunk = ChunkLength<int>(maxChunkLength, column.Validity is not null);
        return NativeArrowColumn.CreateDictionary(column, largeOffsets, chunk, nameof(column));
    }

    private static unsafe int ChunkLength<T>(int maxChunkLength, bool nullable)
        where T : unmanaged
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxChunkLength);
        if (maxChunkLength == 0)
        {
            return (1 << 30) / sizeof(T);
        }

        if ((long)maxChunkLength * sizeof(T) > int.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(maxChunkLength), maxChunkLength, $"A chunk of {maxChunkLength:N0} {typeof(T).Name} values takes more than 2 GiB, an Arrow buffer's limit.");
        }

        if (nullable && maxChunkLength % 8 != 0)
        {
            throw new ArgumentException($"With a validity bitmap the chunk length must be a multiple of 8 (so each chunk's bitmap starts on a byte); {maxChunkLength:N0} is not.", nameof(maxChunkLength));
        }

        return maxChunkLength;
    }
}
