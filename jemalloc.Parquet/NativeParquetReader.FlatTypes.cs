using jemalloc.AddOns;
using jemalloc.Parquet.Internal;
using ParquetSharp;

namespace jemalloc.Parquet;

// The flat types beyond plain numbers: DECIMAL (on INT32, INT64, FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY),
// FIXED_LEN_BYTE_ARRAY as fixed-size binary, FLOAT16 as Half, and the description of a column.
public sealed partial class NativeParquetReader
{
    /// <summary>Describes a column: its physical and logical types and their parameters (width, precision and scale, time unit). A logical type this version of Parquet does not know is described as <see cref="LogicalTypeEnum.Undefined"/>.</summary>
    /// <param name="column">The column's name.</param>
    /// <returns>The column's description.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    public ParquetColumnInfo GetColumnInfo(string column)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            // A logical type newer than ParquetSharp (it throws for one) is described, not thrown: the
            // column's bytes can still be read, as binary, and the caller is told what it is missing.
            using LogicalType? logical = ByteArrayTypes.LogicalTypeOrNull(descriptor);
            PhysicalType physical = descriptor.PhysicalType;
            (TimeUnit unit, bool utc) = logical switch
            {
                TimestampLogicalType timestamp => (timestamp.TimeUnit, timestamp.IsAdjustedToUtc),
                TimeLogicalType time => (time.TimeUnit, time.IsAdjustedToUtc),
                _ => (TimeUnit.Unknown, false),
            };
            (int precision, int scale) = logical is DecimalLogicalType decimalType ? (decimalType.Precision, decimalType.Scale) : (0, 0);
            return new ParquetColumnInfo(
                column,
                physical,
                logical?.Type ?? LogicalTypeEnum.Undefined,
                ByteArrayTypes.Describe(logical),
                descriptor.MaxDefinitionLevel > 0,
                physical == PhysicalType.FixedLenByteArray ? descriptor.TypeLength : 0,
                precision,
                scale,
                unit,
                utc);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Reads a DECIMAL column into a new native decimal column, with the library's default options.</summary>
    /// <inheritdoc cref="ReadDecimalColumn(string, AllocationOptions)"/>
    public DecimalColumn ReadDecimalColumn(string column) => ReadDecimal(column, null);

    /// <summary>
    /// Reads a DECIMAL column (stored as INT32, INT64, FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY) into a new
    /// native decimal column: each row's unscaled value as an <see cref="Int128"/>, nulls in a validity bitmap.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the values, the bitmap and the reader's small scratch blocks are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (none for a file without rows), which the caller owns; its bitmap is <see langword="null"/> when no row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or it is not a DECIMAL column; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column's precision is over 38 digits (decimal256), or the column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">A value does not fit in 128 bits or is empty; the column's chunks or pages hold fewer or more rows than the file's metadata says; or its logical type is one ParquetSharp does not know.</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    /// <exception cref="InvalidDataException">A page cannot be decoded, decompressed or fails its checksum (ParquetSharp's exception is the inner one); the message names the file, the column and the row group.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public DecimalColumn ReadDecimalColumn(string column, AllocationOptions options) => ReadDecimal(column, options);

    /// <summary>Reads a FIXED_LEN_BYTE_ARRAY column into a new native fixed-size binary column, with the library's default options.</summary>
    /// <inheritdoc cref="ReadFixedSizeBinaryColumn(string, AllocationOptions)"/>
    public FixedSizeBinaryColumn ReadFixedSizeBinaryColumn(string column) => ReadFixedSizeBinary(column, null);

    /// <summary>
    /// Reads a FIXED_LEN_BYTE_ARRAY column (UUID, FLOAT16, DECIMAL, plain bytes, or of a logical type ParquetSharp does not know) into a new native
    /// fixed-size binary column: the values' bytes as the file stores them, row after row, nulls in a validity bitmap.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the data, the bitmap and the reader's small scratch blocks are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (none for a file without rows), which the caller owns; its bitmap is <see langword="null"/> when no row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or it is not a FIXED_LEN_BYTE_ARRAY column; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column declares a width under 1 byte, or its chunks or pages hold fewer or more rows than the file's metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    /// <exception cref="InvalidDataException">A page cannot be decoded, decompressed or fails its checksum (ParquetSharp's exception is the inner one); the message names the file, the column and the row group.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public FixedSizeBinaryColumn ReadFixedSizeBinaryColumn(string column, AllocationOptions options) => ReadFixedSizeBinary(column, options);

    private unsafe DecimalColumn ReadDecimal(string column, AllocationOptions? options)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            CheckFlat(descriptor, column);
            PhysicalType physical = descriptor.PhysicalType;
            int precision;
            int scale;
            using (LogicalType? logical = ByteArrayTypes.LogicalTypeOrNull(descriptor))
            {
                if (logical is null)
                {
                    ParquetThrow.InvalidData($"Column '{column}' ({physical}) of '{_path}' has a logical type ParquetSharp does not know, so it cannot be read as a decimal column.");
                }

                if (logical is not DecimalLogicalType decimalType)
                {
                    throw new ArgumentException($"Column '{column}' of '{_path}' holds {physical} values of logical type {logical}, not DECIMAL; it cannot be read as a decimal column.", nameof(column));
                }

                precision = decimalType.Precision;
                scale = decimalType.Scale;
            }

            if (precision > DecimalColumn.MaxPrecision)
            {
                ParquetThrow.NotSupported($"Column '{column}' of '{_path}' is a DECIMAL({precision}, {scale}); a decimal column holds at most {DecimalColumn.MaxPrecision} digits (decimal128).");
            }

            if (precision < 1 || scale < 0 || scale > precision)
            {
                ParquetThrow.InvalidData($"Column '{column}' of '{_path}' declares DECIMAL({precision}, {scale}): a precision of at least 1 and a scale from 0 to the precision are required.");
            }

            long rows = CheckedRows();
            AllocationOptions chosen = options ?? HugePagePolicy.DefaultFor<Int128>(rows);
            var values = rows == 0 ? new HugeArray<Int128>(1, Int128.Zero, chosen) : new HugeArray<Int128>(rows, chosen);
            HugeArray<byte>? validity = null;
            try
            {
                validity = NewBitmap(descriptor, rows, chosen);
                var job = new RowGroupRead(index, Describe(descriptor, column), rows, descriptor.MaxDefinitionLevel, chosen with { HugePages = false });
                long nullCount;
                using (var valueBlock = LeasedBlock<Int128>.Of(values))
                using (var validityBlock = LeasedBlock<byte>.Of(validity))
                {
                    Int128* destination = valueBlock.Pointer;
                    byte* bits = validityBlock.Pointer;
                    nullCount = physical switch
                    {
                        PhysicalType.Int32 => ReadFlat<int, Int32DecimalSink>(job, new Int32DecimalSink(destination), bits),
                        PhysicalType.Int64 => ReadFlat<long, Int64DecimalSink>(job, new Int64DecimalSink(destination), bits),
                        PhysicalType.FixedLenByteArray => ReadFlat<FixedLenByteArray, FixedDecimalSink>(job, new FixedDecimalSink(destination, CheckedWidth(descriptor, column), column), bits),
                        PhysicalType.ByteArray => ReadFlat<ByteArray, VariableDecimalSink>(job, new VariableDecimalSink(destination, column), bits),
                        _ => throw new InvalidDataException($"Column '{column}' of '{_path}' is a DECIMAL stored as {physical}, which the format does not allow."),
                    };
                    CheckPrecision(destination, bits, rows, precision, job.Where);
                }

                validity = DropBitmapWithoutNulls(validity, nullCount);
                return new DecimalColumn(values, validity, rows, precision, scale);
            }
            catch
            {
                values.Dispose();
                validity?.Dispose();
                throw;
            }
        }
        catch (OutOfMemoryException e) when (e is not ArenaBudgetExceededException)
        {
            throw ParquetThrow.CannotHold(_path, column, e);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private unsafe FixedSizeBinaryColumn ReadFixedSizeBinary(string column, AllocationOptions? options)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            CheckFlat(descriptor, column);
            if (descriptor.PhysicalType != PhysicalType.FixedLenByteArray)
            {
                using LogicalType? logical = ByteArrayTypes.LogicalTypeOrNull(descriptor);
                ParquetThrow.Argument(nameof(column), $"Column '{column}' of '{_path}' holds {descriptor.PhysicalType} values ({ByteArrayTypes.Describe(logical)}), not FIXED_LEN_BYTE_ARRAY; it cannot be read as a fixed-size binary column.");
            }

            int width = CheckedWidth(descriptor, column);
            long rows = CheckedRows();
            if (rows > long.MaxValue / width)
            {
                ParquetThrow.InvalidData($"Column '{column}' of '{_path}' declares {rows:N0} rows of {width} bytes, more bytes than a column can hold.");
            }

            long bytes = Math.Max(1, rows) * width;

            AllocationOptions chosen = options ?? HugePagePolicy.DefaultFor<byte>(bytes);
            var data = rows == 0 ? new HugeArray<byte>(bytes, 0, chosen) : new HugeArray<byte>(bytes, chosen);
            HugeArray<byte>? validity = null;
            try
            {
                validity = NewBitmap(descriptor, rows, chosen);
                var job = new RowGroupRead(index, Describe(descriptor, column), rows, descriptor.MaxDefinitionLevel, chosen with { HugePages = false });
                long nullCount;
                using (var dataBlock = LeasedBlock<byte>.Of(data))
                using (var validityBlock = LeasedBlock<byte>.Of(validity))
                {
                    nullCount = ReadFlat<FixedLenByteArray, FixedBytesSink>(job, new FixedBytesSink(dataBlock.Pointer, width), validityBlock.Pointer);
                }

                validity = DropBitmapWithoutNulls(validity, nullCount);
                return new FixedSizeBinaryColumn(data, validity, rows, width);
            }
            catch
            {
                data.Dispose();
                validity?.Dispose();
                throw;
            }
        }
        catch (OutOfMemoryException e) when (e is not ArenaBudgetExceededException)
        {
            throw ParquetThrow.CannotHold(_path, column, e);
        }
        finally
        {
            _guard.Exit();
        }
    }

    // A stored integer with more digits than the column's precision (a malformed file: the writer refuses
    // such a value) would be a number the column cannot hold; it is refused, naming the row, rather than read.
    private static unsafe void CheckPrecision(Int128* values, byte* bits, long rows, int precision, string where)
    {
        long row = DecimalDigits.FirstPastPrecision(values, bits, rows, precision);
        if (row >= 0)
        {
            ParquetThrow.InvalidData($"The {where} holds {values[row]} at row {row:N0}: more digits than its precision of {precision}.");
        }
    }

    // ReadColumn<Half> / ReadNullableColumn<Half> of a FLOAT16 column (FIXED_LEN_BYTE_ARRAY(2)): each
    // value's two bytes are a little-endian IEEE half, Half's own layout, copied into the array.
    private unsafe long ReadFloat16<T>(in RowGroupRead job, HugeArray<T> values, HugeArray<byte>? validity)
        where T : unmanaged, IEquatable<T>
    {
        ColumnDescriptor descriptor = _schema.Column(job.Index);
        if (descriptor.TypeLength != sizeof(T))
        {
            ParquetThrow.InvalidData($"The {job.Where} is a FLOAT16 of {descriptor.TypeLength} bytes; a FLOAT16 takes {sizeof(T)}.");
        }

        using var valueBlock = LeasedBlock<T>.Of(values);
        using var validityBlock = LeasedBlock<byte>.Of(validity);
        return ReadFlat<FixedLenByteArray, FixedBytesSink>(job, new FixedBytesSink((byte*)valueBlock.Pointer, sizeof(T)), validityBlock.Pointer);
    }

    // A flat-type column, value by value into the value sink at its row (bits null: a null throws, as
    // ReadColumn does), through a scratch block that holds a batch's values packed.
    private unsafe long ReadFlat<TPhysical, TValues>(in RowGroupRead job, TValues values, byte* bits)
        where TPhysical : unmanaged
        where TValues : struct, IValueSink<TPhysical>
    {
        using var scratchBlock = LeasedBlock<byte>.Scratch(true, ChunkFor(job.Rows) * sizeof(TPhysical), job.ScratchOptions);
        var sink = new FlatBatchSink<TPhysical, TValues>(values, (TPhysical*)scratchBlock.Pointer, bits, job.Where);
        ReadRowGroups<TPhysical, FlatBatchSink<TPhysical, TValues>>(job, ref sink);
        return sink.NullCount;
    }

    private void CheckFlat(ColumnDescriptor descriptor, string column)
    {
        if (descriptor.MaxRepetitionLevel > 0)
        {
            ParquetThrow.Repeated(descriptor, column, _path);
        }
    }

    private int CheckedWidth(ColumnDescriptor descriptor, string column)
    {
        int width = descriptor.TypeLength;
        if (width < 1)
        {
            ParquetThrow.InvalidData($"Column '{column}' of '{_path}' is a FIXED_LEN_BYTE_ARRAY of {width} bytes; its values must take at least one.");
        }

        return width;
    }

    // An OPTIONAL column's bitmap, cleared, for the read to set the valid rows' bits; none for a REQUIRED one.
    private static HugeArray<byte>? NewBitmap(ColumnDescriptor descriptor, long rows, AllocationOptions options) =>
        descriptor.MaxDefinitionLevel > 0 ? new HugeArray<byte>(Math.Max(1, ValidityBitmap.BytesFor(rows)), 0, options) : null;

    // A column that has no nulls gets no bitmap, as one that cannot hold them.
    private static HugeArray<byte>? DropBitmapWithoutNulls(HugeArray<byte>? validity, long nullCount)
    {
        if (validity is not null && nullCount == 0)
        {
            validity.Dispose();
            return null;
        }

        return validity;
    }
}
