using jemalloc.AddOns;
using jemalloc.Parquet.Internal;
using ParquetSharp;

namespace jemalloc.Parquet;

/// <summary>
/// Reads a Parquet file's columns into native columns: each column is decoded by ParquetSharp
/// straight into a <see cref="HugeArray{T}"/>, one chunk of rows at a time, with no managed array in
/// between and no managed allocation per row. Columns may have more than 2^31 rows.
/// </summary>
/// <remarks>
/// <para>
/// A column is read as the element type that holds its values: BOOLEAN as <see cref="bool"/>; INT32 as
/// <see cref="int"/> (plain, DATE and TIME columns), or as the type its INT logical type names
/// (<see cref="sbyte"/>, <see cref="byte"/>, <see cref="short"/>, <see cref="ushort"/>, <see cref="uint"/>;
/// an INT(8) or INT(16) column may also be read as <see cref="int"/>, and an unsigned one, UINT(8) or
/// UINT(16), as <see cref="uint"/>: each holds every value of the narrower type); INT64 as <see cref="long"/> (plain,
/// TIMESTAMP and TIME columns) or <see cref="ulong"/> (UINT_64); INT96 as <see cref="Int96"/>; FLOAT as
/// <see cref="float"/>; DOUBLE as <see cref="double"/>; FLOAT16 (FIXED_LEN_BYTE_ARRAY(2)) as <see cref="Half"/>.
/// A column of the Null logical type is read as any element type of its physical type, every row null.
/// Any other pairing throws rather than reinterpret the values. DECIMAL columns are read by
/// <see cref="ReadDecimalColumn(string)"/>, other FIXED_LEN_BYTE_ARRAY columns (UUID) by
/// <see cref="ReadFixedSizeBinaryColumn(string)"/>; <see cref="GetColumnInfo(string)"/> tells a column's
/// types, including the unit of a TIME or TIMESTAMP.
/// </para>
/// <para>
/// One thread uses an instance at a time: a call (or <see cref="Dispose"/>) from another thread while
/// one is under way throws <see cref="InvalidOperationException"/> and changes nothing.
/// </para>
/// </remarks>
public sealed partial class NativeParquetReader : IDisposable
{
    // Rows decoded per call into ParquetSharp; the scratch blocks (definition levels, narrowing) hold this many.
    private const int ChunkRows = 64 * 1024;
    private const string TypeName = nameof(NativeParquetReader);

    private readonly ParquetFileReader _file;
    private readonly FileMetaData _metadata;
    private readonly SchemaDescriptor _schema;
    private readonly string[] _columnNames;
    private SingleUserGuard _guard;

    /// <summary>Opens a Parquet file and reads its metadata.</summary>
    /// <param name="path">The file's path.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="FileNotFoundException">There is no file at <paramref name="path"/>.</exception>
    /// <exception cref="ParquetException">The file is not a readable Parquet file.</exception>
    public NativeParquetReader(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"There is no Parquet file at '{path}'.", path);
        }

        _file = new ParquetFileReader(path);
        try
        {
            _metadata = _file.FileMetaData;
            _schema = _metadata.Schema;
            _columnNames = new string[_schema.NumColumns];
            for (int i = 0; i < _columnNames.Length; i++)
            {
                ColumnDescriptor descriptor = _schema.Column(i);
                using ParquetSharp.Schema.ColumnPath columnPath = descriptor.Path;
                _columnNames[i] = columnPath.ToDotString();
            }
        }
        catch
        {
            _file.Dispose();
            throw;
        }
    }

    /// <summary>The number of rows in the file.</summary>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    public long RowCount
    {
        get
        {
            _guard.Enter(TypeName);
            try
            {
                return _metadata.NumRows;
            }
            finally
            {
                _guard.Exit();
            }
        }
    }

    /// <summary>The number of row groups in the file.</summary>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    public int RowGroupCount
    {
        get
        {
            _guard.Enter(TypeName);
            try
            {
                return _metadata.NumRowGroups;
            }
            finally
            {
                _guard.Exit();
            }
        }
    }

    /// <summary>The number of leaf columns.</summary>
    public int ColumnCount => _columnNames.Length;

    /// <summary>The name (for a field of a group, its dotted path) of the column at <paramref name="index"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="ColumnCount"/>.</exception>
    public string GetColumnName(int index)
    {
        if ((uint)index >= (uint)_columnNames.Length)
        {
            ParquetThrow.ArgumentOutOfRange(nameof(index), index, $"The file has {_columnNames.Length} columns.");
        }

        return _columnNames[index];
    }

    /// <summary>The index of the column named <paramref name="column"/> (ordinal comparison).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name.</exception>
    public int GetColumnIndex(string column)
    {
        ArgumentNullException.ThrowIfNull(column);
        int index = Array.IndexOf(_columnNames, column);
        if (index < 0)
        {
            ParquetThrow.Argument(nameof(column), $"The file has no column '{column}'; its columns are: {string.Join(", ", _columnNames)}.");
        }

        return index;
    }

    /// <summary>Whether the column may hold nulls (is OPTIONAL in the schema); such a column without nulls is still read by <see cref="ReadColumn{T}(string)"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    public bool IsNullable(string column)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            return descriptor.MaxDefinitionLevel > 0;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Reads a column that has no nulls into a new native array, with the library's default options (huge pages from 2 MiB).</summary>
    /// <inheritdoc cref="ReadColumn{T}(string, AllocationOptions)"/>
    public HugeArray<T> ReadColumn<T>(string column)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, _, _) = Read<T>(column, null, nullable: false);
        return values;
    }

    /// <summary>Reads a column that has no nulls into a new native array allocated with <paramref name="options"/> (arena, huge pages).</summary>
    /// <typeparam name="T">The element type: the one that holds the column's values (see the class remarks).</typeparam>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the array (and the reader's small scratch blocks) are allocated.</param>
    /// <returns>A new array of <see cref="RowCount"/> elements, which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or its values are not of type <typeparamref name="T"/>; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type, or the column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">The file has no rows (an array has at least one element), or the column has a null: read it with <see cref="ReadNullableColumn{T}(string, AllocationOptions)"/>; or another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The array cannot be allocated.</exception>
    /// <exception cref="ParquetException">ParquetSharp cannot decode the column.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public HugeArray<T> ReadColumn<T>(string column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, _, _) = Read<T>(column, options, nullable: false);
        return values;
    }

    /// <summary>Reads a column, nulls included, into new native values and a validity bitmap, with the library's default options.</summary>
    /// <inheritdoc cref="ReadNullableColumn{T}(string, AllocationOptions)"/>
    public NullableColumn<T> ReadNullableColumn<T>(string column)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, HugeArray<byte>? validity, long nullCount) = Read<T>(column, null, nullable: true);
        return new NullableColumn<T>(values, validity!, nullCount);
    }

    /// <summary>Reads a column, nulls included, into new native values and a validity bitmap allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type: the one that holds the column's values (see the class remarks).</typeparam>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the values, the bitmap and the reader's small scratch blocks are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows, which the caller owns; a column that cannot hold nulls gets a bitmap with every bit set.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or its values are not of type <typeparamref name="T"/>; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type, or the column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">The file has no rows (an array has at least one element), or another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    /// <exception cref="ParquetException">ParquetSharp cannot decode the column.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NullableColumn<T> ReadNullableColumn<T>(string column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, HugeArray<byte>? validity, long nullCount) = Read<T>(column, options, nullable: true);
        return new NullableColumn<T>(values, validity!, nullCount);
    }

    /// <summary>Closes the file. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">Another thread is reading: the reader stays open; dispose it once that read has returned.</exception>
    public void Dispose()
    {
        if (_guard.TryDispose(TypeName))
        {
            _metadata.Dispose();
            _file.Dispose();
        }
    }

    // One read, under the guard: no other thread can read or dispose the reader meanwhile. Options
    // null: the library's default for the column's size.
    private (HugeArray<T> Values, HugeArray<byte>? Validity, long NullCount) Read<T>(string column, AllocationOptions? options, bool nullable)
        where T : unmanaged, IEquatable<T>
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            return ReadEntered<T>(index, column, options, nullable);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private (HugeArray<T> Values, HugeArray<byte>? Validity, long NullCount) ReadEntered<T>(int index, string column, AllocationOptions? options, bool nullable)
        where T : unmanaged, IEquatable<T>
    {
        PhysicalType physical;
        ParquetTypes.ReadKind kind;
        short maxDefinition;
        ColumnDescriptor descriptor = _schema.Column(index);
        kind = ParquetTypes.CheckReadable<T>(descriptor, column, nameof(column));
        ParquetTypes.IntegerRange? range = ParquetTypes.RangeOf(descriptor);
        physical = descriptor.PhysicalType;
        maxDefinition = descriptor.MaxDefinitionLevel;

        long rows = _metadata.NumRows;
        CheckRowCounts(rows);
        if (rows == 0)
        {
            ParquetThrow.InvalidOperation($"The file has no rows, so column '{column}' cannot be read into an array (an array has at least one element).");
        }

        AllocationOptions chosen = options ?? HugePagePolicy.DefaultFor<T>(rows);
        var values = new HugeArray<T>(rows, chosen);
        HugeArray<byte>? validity = null;
        try
        {
            if (nullable)
            {
                // A required column has no nulls: every row is valid. Otherwise the read sets the valid rows' bits.
                long bitmapBytes = ValidityBitmap.BytesFor(rows);
                validity = maxDefinition == 0 ? new HugeArray<byte>(bitmapBytes, (byte)0xFF, chosen) : new HugeArray<byte>(bitmapBytes, chosen);
            }

            var job = new ColumnRead(index, column, rows, maxDefinition, kind, range, chosen with { HugePages = false });
            long nullCount = physical switch
            {
                PhysicalType.Boolean => ReadAll<bool, T>(job, values, validity),
                PhysicalType.Int32 => ReadAll<int, T>(job, values, validity),
                PhysicalType.Int64 => ReadAll<long, T>(job, values, validity),
                PhysicalType.Int96 => ReadAll<Int96, T>(job, values, validity),
                PhysicalType.Float => ReadAll<float, T>(job, values, validity),
                PhysicalType.FixedLenByteArray => ReadFloat16(job, values, validity),
                _ => ReadAll<double, T>(job, values, validity),
            };
            return (values, validity, nullCount);
        }
        catch
        {
            values.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    // The footer's counts agree with one another before anything is allocated for them: the file's rows
    // are the sum of its row groups', none negative. (Whether the pages hold them is checked as they are read.)
    private void CheckRowCounts(long rows)
    {
        long sum = 0;
        int groups = _metadata.NumRowGroups;
        for (int g = 0; g < groups; g++)
        {
            using RowGroupReader group = _file.RowGroup(g);
            long groupRows = group.MetaData.NumRows;
            if (groupRows < 0 || (sum += groupRows) < 0)
            {
                ParquetThrow.InvalidData($"Row group {g} of the file declares {groupRows:N0} rows.");
            }
        }

        if (rows != sum)
        {
            ParquetThrow.InvalidData($"The file's metadata declares {rows:N0} rows, and its {groups} row groups {sum:N0}.");
        }
    }

    // Decodes every row group's chunk of one column into the destination, ChunkRows rows per call.
    // Direct: ParquetSharp writes the values into the destination itself; an optional column's
    // values arrive packed (nulls left out) and are spread to their rows in place, from the end back.
    // Narrow: the INT32 values land in a scratch block and are narrowed into the destination.
    private unsafe long ReadAll<TPhysical, T>(in ColumnRead job, HugeArray<T> values, HugeArray<byte>? validity)
        where TPhysical : unmanaged
        where T : unmanaged, IEquatable<T>
    {
        int chunk = (int)Math.Min(ChunkRows, job.Rows);
        bool narrow = job.Kind == ParquetTypes.ReadKind.Narrow;
        using var valueBlock = LeasedBlock<T>.Of(values);
        using var validityBlock = LeasedBlock<byte>.Of(validity);
        using var levelBlock = LeasedBlock<short>.Scratch(job.MaxDefinition > 0, chunk, job.ScratchOptions);
        using var scratchBlock = LeasedBlock<int>.Scratch(narrow, chunk, job.ScratchOptions);
        T* destination = valueBlock.Pointer;
        byte* bits = validityBlock.Pointer;
        short* levels = levelBlock.Pointer;
        TPhysical* scratch = (TPhysical*)scratchBlock.Pointer; // INT32 values: TPhysical is int when narrowing

        long row = 0;
        long nullCount = 0;
        int groups = _metadata.NumRowGroups;
        for (int g = 0; g < groups; g++)
        {
            using RowGroupReader group = _file.RowGroup(g);
            RowGroupMetaData groupMetadata = group.MetaData;
            long left = groupMetadata.NumRows;
            using ColumnReader reader = group.Column(job.Index);
            var typed = (ColumnReader<TPhysical>)reader;
            while (left > 0)
            {
                int batch = (int)Math.Min(left, chunk);
                if (row + batch > job.Rows)
                {
                    ParquetThrow.InvalidData($"Column '{job.Column}' holds more rows than the file's {job.Rows:N0}.");
                }

                TPhysical* target = narrow ? scratch : (TPhysical*)(destination + row);
                long read = typed.ReadBatch(
                    batch,
                    levels is null ? default : new Span<short>(levels, batch),
                    default,
                    new Span<TPhysical>(target, batch),
                    out long valuesRead);
                if (read <= 0)
                {
                    ParquetThrow.InvalidData($"Column '{job.Column}' ends at row {row:N0} of row group {g}, which the metadata says has {groupMetadata.NumRows:N0} rows.");
                }

                if (job.Range is { } declared)
                {
                    // INT32 values of an 8- or 16-bit column: each must be one its logical type can hold,
                    // or narrowing (and widening into a wider element) would give a value the file never had.
                    CheckRange((int*)target, valuesRead, declared, job.Column, row);
                }

                int count = (int)read;
                if (levels is null || valuesRead == read)
                {
                    // No nulls in this batch: the values are in their rows already (or packed in order in the scratch block).
                    if (narrow)
                    {
                        NarrowInto(destination + row, (int*)scratch, count);
                    }

                    if (bits != null && levels != null)
                    {
                        ValidityBitmap.SetRange(bits, row, count);
                    }
                }
                else
                {
                    if (bits is null)
                    {
                        ThrowNullFound(job.Column, row, levels, job.MaxDefinition, count);
                    }

                    nullCount += Spread(destination + row, target, levels, job.MaxDefinition, count, valuesRead, narrow, bits, row);
                }

                row += count;
                left -= count;
            }

            if (typed.HasNext)
            {
                // The pages hold more values than the footer declares rows: a forged or damaged
                // footer, whose rows would otherwise be cut off without a word.
                ParquetThrow.InvalidData($"Column '{job.Column}' of row group {g} holds more values than the {groupMetadata.NumRows:N0} rows the file's metadata declares for it.");
            }
        }

        if (row != job.Rows)
        {
            ParquetThrow.InvalidData($"Column '{job.Column}' holds {row:N0} rows; the file's metadata says {job.Rows:N0}.");
        }

        return nullCount;
    }

    // Puts packed values at their rows (null rows get default) and sets the valid rows' bits; returns the nulls.
    // In place (direct), it walks from the end back: value k never moves to a row before k.
    private static unsafe long Spread<TPhysical, T>(T* destination, TPhysical* packed, short* levels, short maxDefinition, int count, long valuesRead, bool narrow, byte* bits, long firstRow)
        where TPhysical : unmanaged
        where T : unmanaged
    {
        long nulls = 0;
        if (narrow)
        {
            int* source = (int*)packed;
            long next = 0;
            for (int i = 0; i < count; i++)
            {
                if (levels[i] == maxDefinition)
                {
                    Narrow(destination + i, source[next++]);
                    ValidityBitmap.Set(bits, firstRow + i);
                }
                else
                {
                    destination[i] = default;
                    nulls++;
                }
            }

            return nulls;
        }

        var target = (TPhysical*)destination;
        long last = valuesRead - 1;
        for (int i = count - 1; i >= 0; i--)
        {
            if (levels[i] == maxDefinition)
            {
                target[i] = packed[last--];
                ValidityBitmap.Set(bits, firstRow + i);
            }
            else
            {
                target[i] = default;
                nulls++;
            }
        }

        return nulls;
    }

    private static unsafe void CheckRange(int* values, long count, ParquetTypes.IntegerRange range, string column, long firstRow)
    {
        for (long i = 0; i < count; i++)
        {
            int value = values[i];
            if (value < range.Min || value > range.Max)
            {
                ParquetThrow.InvalidData($"Column '{column}' holds {value} in the batch from row {firstRow:N0}, outside its logical type {range.Name} ({range.Min} to {range.Max}).");
            }
        }
    }

    private static unsafe void NarrowInto<T>(T* destination, int* source, int count)
        where T : unmanaged
    {
        for (int i = 0; i < count; i++)
        {
            Narrow(destination + i, source[i]);
        }
    }

    // An INT(8) or INT(16) column's value, stored as INT32, into its 1- or 2-byte element (truncation keeps it exactly).
    private static unsafe void Narrow<T>(T* destination, int value)
        where T : unmanaged
    {
        if (sizeof(T) == 1)
        {
            *(byte*)destination = (byte)value;
        }
        else
        {
            *(ushort*)destination = (ushort)value;
        }
    }

    private static unsafe void ThrowNullFound(string column, long firstRow, short* levels, short maxDefinition, int count)
    {
        long at = firstRow;
        for (int i = 0; i < count; i++)
        {
            if (levels[i] != maxDefinition)
            {
                at = firstRow + i;
                break;
            }
        }

        ParquetThrow.InvalidOperation($"Column '{column}' has a null at row {at:N0}: read it with ReadNullableColumn.");
    }

    /// <summary>One column read's settings, passed down the generic read as one value.</summary>
    private readonly record struct ColumnRead(int Index, string Column, long Rows, short MaxDefinition, ParquetTypes.ReadKind Kind, ParquetTypes.IntegerRange? Range, AllocationOptions ScratchOptions);
}
