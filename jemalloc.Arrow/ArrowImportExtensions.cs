using System.Buffers.Binary;
using Apache.Arrow;
using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

/// <summary>
/// Arrow columns (read from IPC, or imported through the C Data Interface with
/// <see cref="Apache.Arrow.C.CArrowArrayImporter"/>) brought into native columns. This is one copy:
/// an imported Arrow buffer belongs to its producer, which frees it on its own terms, so a native
/// column that the library owns and frees needs its own block.
/// </summary>
public static class ArrowImportExtensions
{
    /// <summary>Copies a column that has no nulls into a new native array allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type matching the column's Arrow type (sbyte, byte, short, ushort, int, uint, long, ulong, Half, float or double).</typeparam>
    /// <param name="column">The Arrow column.</param>
    /// <param name="options">How the array is allocated.</param>
    /// <returns>A new array, which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The column's type is not <typeparamref name="T"/>'s, it is empty (an array has at least one element), or a chunk declares more values than its buffers hold.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> has no Arrow primitive type of its layout.</exception>
    /// <exception cref="InvalidOperationException">The column has nulls: use the overload with a validity bitmap.</exception>
    /// <exception cref="OutOfMemoryException">The array cannot be allocated.</exception>
    public static HugeArray<T> ToHugeArray<T>(this ChunkedArray column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        Check<T>(column);
        if (column.NullCount > 0)
        {
            throw new InvalidOperationException($"The column has {column.NullCount:N0} nulls; copy it with the overload that returns a validity bitmap.");
        }

        return Copy<T>(column, options, null);
    }

    /// <summary>Copies a column, nulls included, into new native values and a validity bitmap (Arrow's layout), both allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type matching the column's Arrow type.</typeparam>
    /// <param name="column">The Arrow column.</param>
    /// <param name="options">How the arrays are allocated.</param>
    /// <param name="validity">The new bitmap: bit <c>i % 8</c> of byte <c>i / 8</c> is set when row <c>i</c> has a value. The caller owns it.</param>
    /// <returns>The new values (a null row holds whatever the Arrow buffer held there), which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The column's type is not <typeparamref name="T"/>'s, it is empty, or a chunk declares more values than its buffers hold.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> has no Arrow primitive type of its layout.</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    public static HugeArray<T> ToHugeArray<T>(this ChunkedArray column, AllocationOptions options, out HugeArray<byte> validity)
        where T : unmanaged, IEquatable<T>
    {
        Check<T>(column);
        validity = new HugeArray<byte>((column.Length + 7) / 8, options);
        try
        {
            return Copy<T>(column, options, validity);
        }
        catch
        {
            validity.Dispose();
            throw;
        }
    }

    /// <summary>Copies one Arrow array that has no nulls into a new native array.</summary>
    /// <inheritdoc cref="ToHugeArray{T}(ChunkedArray, AllocationOptions)"/>
    public static HugeArray<T> ToHugeArray<T>(this IArrowArray array, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(array);
        return new ChunkedArray([array]).ToHugeArray<T>(options);
    }

    /// <summary>
    /// Copies a utf8, large_utf8, binary or large_binary column, nulls included, into a new
    /// <see cref="NativeStringColumn"/> allocated with <paramref name="options"/> (text for the utf8 types,
    /// binary otherwise). An empty column gives a column of no rows.
    /// </summary>
    /// <param name="column">The Arrow column.</param>
    /// <param name="options">How the column's blocks are allocated.</param>
    /// <returns>The new column, which the caller owns; it has a validity bitmap only if a row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The column is not of a string or binary type, or a chunk's offsets or bitmap do not fit its buffers.</exception>
    /// <exception cref="OutOfMemoryException">The column cannot be allocated.</exception>
    public static NativeStringColumn ToNativeStringColumn(this ChunkedArray column, AllocationOptions options)
    {
        ArgumentNullException.ThrowIfNull(column);
        bool large;
        bool isUtf8;
        switch (column.DataType.TypeId)
        {
            case ArrowTypeId.String:
                (large, isUtf8) = (false, true);
                break;
            case ArrowTypeId.LargeString:
                (large, isUtf8) = (true, true);
                break;
            case ArrowTypeId.Binary:
                (large, isUtf8) = (false, false);
                break;
            case ArrowTypeId.LargeBinary:
                (large, isUtf8) = (true, false);
                break;
            default:
                throw new ArgumentException($"The column holds {column.DataType.Name} values, not utf8, large_utf8, binary or large_binary.", nameof(column));
        }

        using var builder = new NativeStringColumnBuilder(isUtf8, options);
        for (int c = 0; c < column.ArrayCount; c++)
        {
            AppendStrings(builder, column.ArrowArray(c).Data, c, large, nameof(column));
        }

        return builder.Build();
    }

    /// <summary>Copies one utf8, large_utf8, binary or large_binary array into a new native string column.</summary>
    /// <inheritdoc cref="ToNativeStringColumn(ChunkedArray, AllocationOptions)"/>
    /// <param name="array">The Arrow array.</param>
    /// <param name="options">How the column's blocks are allocated.</param>
    public static NativeStringColumn ToNativeStringColumn(this IArrowArray array, AllocationOptions options)
    {
        ArgumentNullException.ThrowIfNull(array);
        return new ChunkedArray([array]).ToNativeStringColumn(options);
    }

    /// <summary>
    /// Copies a dictionary-encoded column (any integer index type; utf8, large_utf8, binary or large_binary
    /// values) into a new <see cref="NativeDictionaryColumn"/> allocated with <paramref name="options"/>. The
    /// chunks' dictionaries become one: each row's value is looked up by its bytes, so a value each chunk's
    /// dictionary holds is held once. A row whose index names a null dictionary value is null.
    /// </summary>
    /// <param name="column">The Arrow column.</param>
    /// <param name="options">How the column's blocks are allocated.</param>
    /// <returns>The new column, which the caller owns; it has a validity bitmap only if a row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The column is not dictionary-encoded with string or binary values; a chunk's buffers do not hold what it declares; or a row's index names no dictionary value.</exception>
    /// <exception cref="OutOfMemoryException">The column cannot be allocated.</exception>
    public static NativeDictionaryColumn ToNativeDictionaryColumn(this ChunkedArray column, AllocationOptions options)
    {
        ArgumentNullException.ThrowIfNull(column);
        if (column.DataType is not DictionaryType { IndexType: IntegerType } type)
        {
            throw new ArgumentException($"The column holds {column.DataType.Name} values, not a dictionary of utf8, large_utf8, binary or large_binary values with integer indices.", nameof(column));
        }

        (bool large, bool isUtf8) = type.ValueType.TypeId switch
        {
            ArrowTypeId.String => (false, true),
            ArrowTypeId.LargeString => (true, true),
            ArrowTypeId.Binary => (false, false),
            ArrowTypeId.LargeBinary => (true, false),
            _ => throw new ArgumentException($"The column's dictionary holds {type.ValueType.Name} values, not utf8, large_utf8, binary or large_binary.", nameof(column)),
        };

        using var builder = new NativeDictionaryColumnBuilder(isUtf8, options);
        for (int c = 0; c < column.ArrayCount; c++)
        {
            ArrayData data = column.ArrowArray(c).Data;
            if (data.Dictionary is null)
            {
                throw new ArgumentException($"Chunk {c} of the column has no dictionary.", nameof(column));
            }

            var values = new ChunkValues(data.Dictionary, c, large, nameof(column));
            ReadOnlySpan<byte> bits = IndexBitmap(data, c, nameof(column));
            int width = ((FixedWidthType)type.IndexType).BitWidth / 8;
            bool signed = type.IndexType is IntegerType { IsSigned: true };
            ReadOnlySpan<byte> indices = data.Buffers.Length < 2 ? default : data.Buffers[1].Span;
            if (indices.Length < ((long)data.Offset + data.Length) * width)
            {
                throw new ArgumentException($"Chunk {c} of the column declares {data.Length:N0} indices from offset {data.Offset:N0}, but its index buffer holds {indices.Length:N0} bytes.", nameof(column));
            }

            for (int i = 0; i < data.Length; i++)
            {
                int at = data.Offset + i;
                if (!bits.IsEmpty && !ValidityBitmap.IsSet(bits, at))
                {
                    builder.AppendNull();
                    continue;
                }

                long index = ReadIndex(indices.Slice(at * width, width), signed);
                if (index < 0 || index >= values.Length)
                {
                    // An unsigned 64-bit index past long.MaxValue read as negative: the message gives the index written.
                    string written = index < 0 && !signed ? ((ulong)index).ToString("N0", System.Globalization.CultureInfo.CurrentCulture) : index.ToString("N0", System.Globalization.CultureInfo.CurrentCulture);
                    throw new ArgumentException($"Row {i:N0} of chunk {c} has index {written}; the chunk's dictionary has {values.Length:N0} values.", nameof(column));
                }

                if (values.IsNull((int)index))
                {
                    builder.AppendNull();
                }
                else
                {
                    builder.Append(values.Value((int)index, i));
                }
            }
        }

        return builder.Build();
    }

    /// <summary>Copies one dictionary-encoded array into a new native dictionary column.</summary>
    /// <inheritdoc cref="ToNativeDictionaryColumn(ChunkedArray, AllocationOptions)"/>
    /// <param name="array">The Arrow array.</param>
    /// <param name="options">How the column's blocks are allocated.</param>
    public static NativeDictionaryColumn ToNativeDictionaryColumn(this IArrowArray array, AllocationOptions options)
    {
        ArgumentNullException.ThrowIfNull(array);
        return new ChunkedArray([array]).ToNativeDictionaryColumn(options);
    }

    private static ReadOnlySpan<byte> IndexBitmap(ArrayData data, int chunk, string paramName)
    {
        long end = (long)data.Offset + data.Length;
        if (data.Offset < 0 || data.Length < 0 || data.Buffers.Length < 2)
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0} with {data.Buffers.Length} buffers; a dictionary array has 2.", paramName);
        }

        ReadOnlySpan<byte> bits = data.Buffers[0].Span;
        if (!bits.IsEmpty && bits.Length < (end + 7) / 8)
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0}, but its validity bitmap holds {bits.Length:N0} bytes.", paramName);
        }

        return bits;
    }

    private static long ReadIndex(ReadOnlySpan<byte> bytes, bool signed) => bytes.Length switch
    {
        1 => signed ? (sbyte)bytes[0] : bytes[0],
        2 => signed ? BinaryPrimitives.ReadInt16LittleEndian(bytes) : BinaryPrimitives.ReadUInt16LittleEndian(bytes),
        4 => signed ? BinaryPrimitives.ReadInt32LittleEndian(bytes) : BinaryPrimitives.ReadUInt32LittleEndian(bytes),
        // An unsigned 64-bit index past long.MaxValue reads as negative: out of range either way.
        _ => BinaryPrimitives.ReadInt64LittleEndian(bytes),
    };

    /// <summary>A chunk's dictionary: its offsets and bitmap checked once against its buffers, then values read by index.</summary>
    private readonly ref struct ChunkValues
    {
        private readonly ReadOnlySpan<byte> _bits;
        private readonly ReadOnlySpan<byte> _offsets;
        private readonly ReadOnlySpan<byte> _bytes;
        private readonly int _offset;
        private readonly bool _large;
        private readonly int _chunk;
        private readonly string _paramName;

        internal ChunkValues(ArrayData dictionary, int chunk, bool large, string paramName)
        {
            int offsetSize = large ? sizeof(long) : sizeof(int);
            long end = (long)dictionary.Offset + dictionary.Length;
            if (dictionary.Offset < 0 || dictionary.Length < 0 || dictionary.Buffers.Length < 3 || dictionary.Buffers[1].Length < (end + 1) * offsetSize)
            {
                throw new ArgumentException($"The dictionary of chunk {chunk} declares {dictionary.Length:N0} values from offset {dictionary.Offset:N0}, but its buffers do not hold them.", paramName);
            }

            _bits = dictionary.Buffers[0].Span;
            if (!_bits.IsEmpty && _bits.Length < (end + 7) / 8)
            {
                throw new ArgumentException($"The dictionary of chunk {chunk} declares {dictionary.Length:N0} values from offset {dictionary.Offset:N0}, but its validity bitmap holds {_bits.Length:N0} bytes.", paramName);
            }

            _offsets = dictionary.Buffers[1].Span;
            _bytes = dictionary.Buffers[2].Span;
            _offset = dictionary.Offset;
            _large = large;
            _chunk = chunk;
            _paramName = paramName;
            Length = dictionary.Length;
        }

        internal int Length { get; }

        internal bool IsNull(int index) => !_bits.IsEmpty && !ValidityBitmap.IsSet(_bits, _offset + index);

        // The value's offsets are checked against the data buffer as they are read.
        internal ReadOnlySpan<byte> Value(int index, int row)
        {
            int at = _offset + index;
            long start = _large ? BinaryPrimitives.ReadInt64LittleEndian(_offsets.Slice(at * sizeof(long))) : BinaryPrimitives.ReadInt32LittleEndian(_offsets.Slice(at * sizeof(int)));
            long stop = _large ? BinaryPrimitives.ReadInt64LittleEndian(_offsets.Slice((at + 1) * sizeof(long))) : BinaryPrimitives.ReadInt32LittleEndian(_offsets.Slice((at + 1) * sizeof(int)));
            if (start < 0 || stop < start || stop > _bytes.Length)
            {
                throw new ArgumentException($"Dictionary value {index:N0} of chunk {_chunk} (row {row:N0}) declares bytes {start:N0} to {stop:N0}, outside its data buffer of {_bytes.Length:N0} bytes.", _paramName);
            }

            return _bytes.Slice((int)start, (int)(stop - start));
        }
    }

    // One chunk's values: every offset is checked against the data buffer before its bytes are read
    // (an imported or hand-built ArrayData can declare anything).
    private static void AppendStrings(NativeStringColumnBuilder builder, ArrayData data, int chunk, bool large, string paramName)
    {
        int offsetSize = large ? sizeof(long) : sizeof(int);
        long end = (long)data.Offset + data.Length;
        if (data.Offset < 0 || data.Length < 0 || data.Buffers.Length < 3 || data.Buffers[1].Length < (end + 1) * offsetSize)
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0}, but its offsets buffer holds {(data.Buffers.Length < 2 ? 0 : data.Buffers[1].Length):N0} bytes ({(end + 1) * offsetSize:N0} needed).", paramName);
        }

        ReadOnlySpan<byte> bits = data.Buffers[0].Span;
        if (!bits.IsEmpty && bits.Length < (end + 7) / 8)
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0}, but its validity bitmap holds {bits.Length:N0} bytes.", paramName);
        }

        ReadOnlySpan<byte> offsets = data.Buffers[1].Span;
        ReadOnlySpan<byte> bytes = data.Buffers[2].Span;
        for (int i = 0; i < data.Length; i++)
        {
            int index = data.Offset + i;
            if (!bits.IsEmpty && !ValidityBitmap.IsSet(bits, index))
            {
                builder.AppendNull();
                continue;
            }

            long start = large ? BinaryPrimitives.ReadInt64LittleEndian(offsets.Slice(index * sizeof(long))) : BinaryPrimitives.ReadInt32LittleEndian(offsets.Slice(index * sizeof(int)));
            long stop = large ? BinaryPrimitives.ReadInt64LittleEndian(offsets.Slice((index + 1) * sizeof(long))) : BinaryPrimitives.ReadInt32LittleEndian(offsets.Slice((index + 1) * sizeof(int)));
            if (start < 0 || stop < start || stop > bytes.Length)
            {
                throw new ArgumentException($"Row {i:N0} of chunk {chunk} declares bytes {start:N0} to {stop:N0}, outside its data buffer of {bytes.Length:N0} bytes.", paramName);
            }

            builder.Append(bytes.Slice((int)start, (int)(stop - start)));
        }
    }

    private static void Check<T>(ChunkedArray column)
    {
        ArgumentNullException.ThrowIfNull(column);
        IArrowType wanted = ArrowTypes.Of<T>();
        if (column.DataType.TypeId != wanted.TypeId)
        {
            throw new ArgumentException($"The column holds {column.DataType.Name} values, not {wanted.Name} ({typeof(T).Name}).", nameof(column));
        }

        if (column.Length == 0)
        {
            throw new ArgumentException("The column is empty; a native array has at least one element.", nameof(column));
        }
    }

    // An array's declared offset and length must lie inside its buffers (an imported or hand-built
    // ArrayData can say otherwise): otherwise a clear ArgumentException, before anything is read.
    private static unsafe void CheckBuffers<T>(ArrayData data, int chunk, bool readsValidity, string paramName)
        where T : unmanaged
    {
        long end = (long)data.Offset + data.Length;
        if (data.Offset < 0 || data.Length < 0 || data.Buffers.Length < 2 || data.Buffers[1].Length < end * sizeof(T))
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0}, but its value buffer holds {(data.Buffers.Length < 2 ? 0 : data.Buffers[1].Length):N0} bytes ({end * sizeof(T):N0} needed).", paramName);
        }

        if (readsValidity && !data.Buffers[0].IsEmpty && data.Buffers[0].Length < (end + 7) / 8)
        {
            throw new ArgumentException($"Chunk {chunk} of the column declares {data.Length:N0} values from offset {data.Offset:N0}, but its validity bitmap holds {data.Buffers[0].Length:N0} bytes ({(end + 7) / 8:N0} needed).", paramName);
        }
    }

    private static unsafe HugeArray<T> Copy<T>(ChunkedArray column, AllocationOptions options, HugeArray<byte>? validity)
        where T : unmanaged, IEquatable<T>
    {
        var values = new HugeArray<T>(column.Length, options);
        try
        {
            using MemoryLease<T> valueLease = values.Lease();
            using MemoryLease<byte> validityLease = validity is null ? default : validity.Lease();
            byte* destination = (byte*)valueLease.Pointer;
            byte* bits = validity is null ? null : (byte*)validityLease.Pointer;
            long row = 0;
            for (int c = 0; c < column.ArrayCount; c++)
            {
                ArrayData data = column.ArrowArray(c).Data;
                CheckBuffers<T>(data, c, bits != null, nameof(column));
                ReadOnlySpan<byte> source = data.Buffers[1].Span.Slice(data.Offset * sizeof(T), data.Length * sizeof(T));
                source.CopyTo(new Span<byte>(destination + (row * sizeof(T)), source.Length));
                if (bits != null)
                {
                    ReadOnlySpan<byte> sourceBits = data.Buffers[0].Span;
                    for (int i = 0; i < data.Length; i++)
                    {
                        if (sourceBits.IsEmpty || ValidityBitmap.IsSet(sourceBits, data.Offset + i))
                        {
                            ValidityBitmap.Set(bits, row + i);
                        }
                    }
                }

                row += data.Length;
            }

            return values;
        }
        catch
        {
            values.Dispose();
            throw;
        }
    }
}
