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
/// Every refusal names the file, the column and its physical and logical types. A file ParquetSharp
/// cannot open or decode, a page that fails its checksum (<see cref="ParquetReadOptions.VerifyPageChecksums"/>)
/// and a logical type ParquetSharp does not know are an <see cref="InvalidDataException"/> whose
/// <see cref="Exception.InnerException"/> is ParquetSharp's own exception.
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

    private readonly string _path;
    private readonly ParquetFileReader _file;
    private readonly FileMetaData _metadata;
    private readonly SchemaDescriptor _schema;
    private readonly string[] _columnNames;
    private SingleUserGuard _guard;

    // The footer's row count once checked (-1 before): the footer does not change, so each read and
    // RowCount walk its row groups once per reader, not once per call.
    private long _checkedRows = -1;

    /// <summary>Opens a Parquet file and reads its metadata, with the default options (<see cref="ParquetReadOptions.Default"/>: page checksums verified).</summary>
    /// <inheritdoc cref="NativeParquetReader(string, ParquetReadOptions)"/>
    public NativeParquetReader(string path)
        : this(path, ParquetReadOptions.Default)
    {
    }

    /// <summary>Opens a Parquet file and reads its metadata, to be read as <paramref name="options"/> say.</summary>
    /// <param name="path">The file's path.</param>
    /// <param name="options">How the file is read (whether page checksums are verified).</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="FileNotFoundException">There is no file at <paramref name="path"/>.</exception>
    /// <exception cref="InvalidDataException">The file is not a readable Parquet file (its footer or schema is malformed, or a column's physical type is none the format has); the inner exception, if any, is ParquetSharp's.</exception>
    public NativeParquetReader(string path, ParquetReadOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"There is no Parquet file at '{path}'.", path);
        }

        _path = path;
        _file = Open(path, options);
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
                CheckPhysicalType(descriptor, _columnNames[i]);
            }
        }
        catch (Exception e) when (ParquetThrow.IsParquetSharpError(e))
        {
            _metadata?.Dispose();
            _file.Dispose();
            throw ParquetThrow.Unreadable(path, e);
        }
        catch
        {
            _metadata?.Dispose();
            _file.Dispose();
            throw;
        }
    }

    /// <summary>The number of rows in the file.</summary>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The footer's row counts disagree with one another, are negative, or are more than a 64-bit address space could hold.</exception>
    public long RowCount
    {
        get
        {
            _guard.Enter(TypeName);
            try
            {
                return CheckedRows();
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
            ParquetThrow.Argument(nameof(column), $"'{_path}' has no column '{column}'; its columns are: {string.Join(", ", _columnNames)}.");
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
        (HugeArray<T> values, _, _, _) = Read<T>(column, null, nullable: false);
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
    /// <exception cref="InvalidOperationException">The file has no rows (an array has at least one element: <see cref="ReadNullableColumn{T}(string, AllocationOptions)"/> gives an empty column), or the column has a null: read it with <see cref="ReadNullableColumn{T}(string, AllocationOptions)"/>; or another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says; a page fails its checksum; its logical type is one ParquetSharp does not know; or ParquetSharp cannot decode it (the inner exception is ParquetSharp's).</exception>
    /// <exception cref="OutOfMemoryException">The array cannot be allocated.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public HugeArray<T> ReadColumn<T>(string column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, _, _, _) = Read<T>(column, options, nullable: false);
        return values;
    }

    /// <summary>Reads a column, nulls included, into new native values and a validity bitmap, with the library's default options.</summary>
    /// <inheritdoc cref="ReadNullableColumn{T}(string, AllocationOptions)"/>
    public NullableColumn<T> ReadNullableColumn<T>(string column)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, HugeArray<byte>? validity, long rows, long nullCount) = Read<T>(column, null, nullable: true);
        return new NullableColumn<T>(values, validity!, rows, nullCount);
    }

    /// <summary>Reads a column, nulls included, into new native values and a validity bitmap allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type: the one that holds the column's values (see the class remarks).</typeparam>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the values, the bitmap and the reader's small scratch blocks are allocated.</param>
    /// <returns>
    /// A new column of <see cref="RowCount"/> rows, which the caller owns; a column that cannot hold nulls
    /// gets a bitmap with every bit set. A file without rows gives an empty column (<see cref="NullableColumn{T}.Length"/> 0,
    /// over arrays of one element each, since an array has at least one).
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or its values are not of type <typeparamref name="T"/>; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type, or the column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says; a page fails its checksum; its logical type is one ParquetSharp does not know; or ParquetSharp cannot decode it (the inner exception is ParquetSharp's).</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NullableColumn<T> ReadNullableColumn<T>(string column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, HugeArray<byte>? validity, long rows, long nullCount) = Read<T>(column, options, nullable: true);
        return new NullableColumn<T>(values, validity!, rows, nullCount);
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
    private (HugeArray<T> Values, HugeArray<byte>? Validity, long Rows, long NullCount) Read<T>(string column, AllocationOptions? options, bool nullable)
        where T : unmanaged, IEquatable<T>
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            return ReadEntered<T>(index, column, options, nullable);
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

    private (HugeArray<T> Values, HugeArray<byte>? Validity, long Rows, long NullCount) ReadEntered<T>(int index, string column, AllocationOptions? options, bool nullable)
        where T : unmanaged, IEquatable<T>
    {
        ColumnDescriptor descriptor = _schema.Column(index);
        PhysicalType physical = descriptor.PhysicalType;
        ParquetTypes.ReadKind kind;
        ParquetTypes.IntegerRange? range;
        try
        {
            kind = ParquetTypes.CheckReadable<T>(descriptor, column, _path, nameof(column));
            range = ParquetTypes.RangeOf(descriptor);
        }
        catch (Exception e) when (ParquetThrow.IsParquetSharpError(e))
        {
            // A logical type ParquetSharp has no class for (one newer than it) surfaces here.
            throw ParquetThrow.UnknownType(_path, column, physical, e);
        }

        string where = Describe(descriptor, column);
        long rows = CheckedRows();
        AllocationOptions chosen = options ?? HugePagePolicy.DefaultFor<T>(rows);
        var job = new RowGroupRead(index, where, rows, descriptor.MaxDefinitionLevel, chosen with { HugePages = false });
        if (rows == 0)
        {
            return ReadEmpty<T>(job, nullable, chosen);
        }

        HugeArray<byte>? validity = null;
        try
        {
            if (nullable)
            {
                // A required column has no nulls: every row is valid. Otherwise the read sets the valid
                // rows' bits in a cleared bitmap (an eighth of a byte a row: its clearing costs little).
                long bitmapBytes = ValidityBitmap.BytesFor(rows);
                validity = job.MaxDefinition == 0 ? new HugeArray<byte>(bitmapBytes, (byte)0xFF, chosen) : new HugeArray<byte>(bitmapBytes, chosen);
            }

            if (physical == PhysicalType.FixedLenByteArray)
            {
                // FLOAT16: each value's two bytes are copied to its row by row index, into a cleared array.
                var halves = new HugeArray<T>(rows, chosen);
                try
                {
                    return (halves, validity, rows, ReadFloat16(job, halves, validity));
                }
                catch
                {
                    halves.Dispose();
                    throw;
                }
            }

            // The values are decoded into a writer's block, which is not cleared first: the read writes
            // every row once (a null row gets default) and checks that the pages held every row before
            // the block is handed over, so no element is ever seen unwritten. A failed read frees it.
            bool narrow = kind == ParquetTypes.ReadKind.Narrow;
            using var values = new NativeBufferWriter<T>(rows, chosen);
            long nullCount = physical switch
            {
                PhysicalType.Boolean => ReadNumeric<bool, T>(job, values, validity, narrow, range),
                PhysicalType.Int32 => ReadNumeric<int, T>(job, values, validity, narrow, range),
                PhysicalType.Int64 => ReadNumeric<long, T>(job, values, validity, narrow, range),
                PhysicalType.Int96 => ReadNumeric<Int96, T>(job, values, validity, narrow, range),
                PhysicalType.Float => ReadNumeric<float, T>(job, values, validity, narrow, range),
                _ => ReadNumeric<double, T>(job, values, validity, narrow, range),
            };
            return (values.DetachToHugeArray(), validity, rows, nullCount);
        }
        catch
        {
            validity?.Dispose();
            throw;
        }
    }

    // A file without rows: a column read as non-nullable is refused (an array has at least one
    // element); a nullable one is empty, over one cleared element of values and of bitmap. Its chunks
    // are still checked to hold no values, as a read of any other file checks them against the footer.
    private (HugeArray<T> Values, HugeArray<byte>? Validity, long Rows, long NullCount) ReadEmpty<T>(in RowGroupRead job, bool nullable, AllocationOptions chosen)
        where T : unmanaged, IEquatable<T>
    {
        if (!nullable)
        {
            ParquetThrow.InvalidOperation($"The file has no rows, so the {job.Where} cannot be read into an array (an array has at least one element): ReadNullableColumn reads it as an empty column.");
        }

        int groups = _metadata.NumRowGroups;
        for (int g = 0; g < groups; g++)
        {
            try
            {
                using RowGroupReader group = _file.RowGroup(g);
                using ColumnReader reader = group.Column(job.Index);
                if (reader.HasNext)
                {
                    ParquetThrow.InvalidData($"The {job.Where} holds values in row group {g}, which the file's metadata says has none.");
                }
            }
            catch (ParquetException e)
            {
                throw ParquetThrow.DecodeFailed(job.Where, g, 0, e);
            }
        }

        var values = new HugeArray<T>(1, chosen);
        try
        {
            return (values, new HugeArray<byte>(1, chosen), 0, 0);
        }
        catch
        {
            values.Dispose();
            throw;
        }
    }

    // A schema whose Thrift is damaged can give a column a physical type the format does not have
    // (ParquetSharp passes the number on); no read could make sense of its values.
    private void CheckPhysicalType(ColumnDescriptor descriptor, string column)
    {
        PhysicalType physical = descriptor.PhysicalType;
        if (physical is < PhysicalType.Boolean or > PhysicalType.FixedLenByteArray)
        {
            ParquetThrow.InvalidData($"'{_path}' is not a readable Parquet file: its schema gives column '{column}' the physical type {(int)physical}, which the format does not have (the footer is damaged).");
        }
    }

    // The column, its physical and logical types and the file, as every message of a read names them.
    private string Describe(ColumnDescriptor descriptor, string column)
    {
        // A logical type ParquetSharp does not know is named as such: the reads that take it (bytes) still read.
        using LogicalType? logical = ByteArrayTypes.LogicalTypeOrNull(descriptor);
        return $"column '{column}' ({descriptor.PhysicalType}, logical type {ByteArrayTypes.Describe(logical)}) of '{_path}'";
    }

    // The file's rows, once the footer's counts agree with one another.
    // More rows than any column could be read into (16 bytes a row at the widest, a decimal), and few
    // enough that every size computed from them (rows + 1 offsets, a bitmap's bytes) fits in a long.
    private const long MaxRows = long.MaxValue / 16;

    private long CheckedRows()
    {
        if (_checkedRows < 0)
        {
            long rows = _metadata.NumRows;
            CheckRowCounts(rows);
            _checkedRows = rows;
        }

        return _checkedRows;
    }

    // The footer's counts agree with one another before anything is allocated for them: the file's rows
    // are the sum of its row groups', none negative. (Whether the pages hold them is checked as they are read.)
    private void CheckRowCounts(long rows)
    {
        long sum = 0;
        int groups = _metadata.NumRowGroups;
        for (int g = 0; g < groups; g++)
        {
            long groupRows;
            try
            {
                using RowGroupReader group = _file.RowGroup(g);
                groupRows = group.MetaData.NumRows;
            }
            catch (ParquetException e)
            {
                throw ParquetThrow.Unreadable(_path, e);
            }

            if (groupRows < 0 || (sum += groupRows) < 0)
            {
                ParquetThrow.InvalidData($"Row group {g} of '{_path}' declares {groupRows:N0} rows.");
            }
        }

        if (rows != sum)
        {
            ParquetThrow.InvalidData($"The metadata of '{_path}' declares {rows:N0} rows, and its {groups} row groups {sum:N0}.");
        }

        if (rows > MaxRows)
        {
            ParquetThrow.InvalidData($"The metadata of '{_path}' declares {rows:N0} rows, more than a 64-bit address space could hold in any column (at most {MaxRows:N0}).");
        }
    }

    // A numeric column into the writer's block: straight into it, or through a scratch block of INT32
    // values when they are narrowed to 1- or 2-byte elements.
    private unsafe long ReadNumeric<TPhysical, T>(in RowGroupRead job, NativeBufferWriter<T> values, HugeArray<byte>? validity, bool narrow, ParquetTypes.IntegerRange? range)
        where TPhysical : unmanaged
        where T : unmanaged, IEquatable<T>
    {
        using var validityBlock = LeasedBlock<byte>.Of(validity);
        using var scratchBlock = LeasedBlock<int>.Scratch(narrow, ChunkFor(job.Rows), job.ScratchOptions);
        var sink = new NumericBatchSink<TPhysical, T>(values, scratchBlock.Pointer, validityBlock.Pointer, range, job.Where);
        ReadRowGroups<TPhysical, NumericBatchSink<TPhysical, T>>(job, ref sink);
        return sink.NullCount;
    }

    // The one read loop of every column: each row group's chunk is decoded ChunkRows rows per call into
    // where the sink says and handed to it, checked against the footer's row counts, ParquetSharp's
    // exceptions named with the file, column and row group. A row group without rows is passed over
    // (its chunk is only checked to hold no values).
    private unsafe void ReadRowGroups<TPhysical, TSink>(in RowGroupRead job, ref TSink sink)
        where TPhysical : unmanaged
        where TSink : struct, IBatchSink<TPhysical>
    {
        int chunk = ChunkFor(job.Rows);
        using var levelBlock = LeasedBlock<short>.Scratch(job.MaxDefinition > 0, chunk, job.ScratchOptions);
        short* levels = levelBlock.Pointer;
        long row = 0;
        int groups = _metadata.NumRowGroups;
        int g = 0;
        try
        {
            for (; g < groups; g++)
            {
                using RowGroupReader group = _file.RowGroup(g);
                long groupRows = group.MetaData.NumRows;
                long left = groupRows;
                using ColumnReader reader = group.Column(job.Index);
                var typed = (ColumnReader<TPhysical>)reader;
                while (left > 0)
                {
                    int batch = (int)Math.Min(left, chunk);
                    if (row + batch > job.Rows)
                    {
                        ParquetThrow.InvalidData($"The {job.Where} holds more rows than the file's {job.Rows:N0}.");
                    }

                    long read = typed.ReadBatch(
                        batch,
                        levels is null ? default : new Span<short>(levels, batch),
                        default,
                        sink.Target(batch),
                        out long valuesRead);
                    if (read <= 0)
                    {
                        ThrowEndsEarly(job.Where, row, g, groupRows);
                    }

                    CheckValueCount(job.Where, row, (int)read, valuesRead, levels, job.MaxDefinition);
                    sink.Take(row, (int)read, valuesRead, levels, job.MaxDefinition);
                    row += read;
                    left -= read;
                }

                if (typed.HasNext)
                {
                    // The pages hold more values than the footer declares rows: a forged or damaged
                    // footer, whose rows would otherwise be cut off without a word.
                    ThrowMoreValues(job.Where, g, groupRows);
                }
            }
        }
        catch (ParquetException e)
        {
            // A page ParquetSharp cannot decode, decompress or verify: named with the file, column and row group.
            throw ParquetThrow.DecodeFailed(job.Where, g, row, e);
        }

        if (row != job.Rows)
        {
            ParquetThrow.InvalidData($"The {job.Where} holds {row:N0} rows; the file's metadata says {job.Rows:N0}.");
        }
    }

    // parquet-cpp returns the values it decoded next to the batch's levels without checking that they
    // agree: a page whose encoding declares fewer values than its levels define rows (a forged DELTA
    // count, say) would leave defined rows with no value, and a sink would read them from memory no
    // value was decoded into. Every sink relies on this check: the values are exactly the defined rows.
    private static unsafe void CheckValueCount(string where, long firstRow, int rows, long valueCount, short* levels, short maxDefinition)
    {
        long defined = levels is null ? rows : new ReadOnlySpan<short>(levels, rows).Count(maxDefinition);
        if (valueCount != defined)
        {
            ThrowValueCount(where, firstRow, rows, defined, valueCount);
        }
    }

    private static void ThrowValueCount(string where, long firstRow, int rows, long defined, long valueCount) =>
        ParquetThrow.InvalidData($"The {where} gave {valueCount:N0} values for the {defined:N0} rows with a value among the {rows:N0} rows from row {firstRow:N0}: its pages disagree with themselves.");

    // Rows decoded per call, and so the length of the scratch blocks: a file without rows still gets one.
    private static int ChunkFor(long rows) => (int)Math.Clamp(rows, 1, ChunkRows);

    private static void ThrowEndsEarly(string where, long row, int g, long groupRows) =>
        ParquetThrow.InvalidData($"The {where} ends at row {row:N0} of row group {g}, which the metadata says has {groupRows:N0} rows.");

    private static void ThrowMoreValues(string where, int g, long groupRows) =>
        ParquetThrow.InvalidData($"The {where} holds more values in row group {g} than the {groupRows:N0} rows the file's metadata declares for it.");

    // ParquetSharp's reader of the file, with the options' checks; a file it cannot open is invalid data.
    private static ParquetFileReader Open(string path, ParquetReadOptions options)
    {
        using ReaderProperties properties = ReaderProperties.GetDefaultReaderProperties();
        if (options.VerifyPageChecksums)
        {
            properties.EnablePageChecksumVerification();
        }
        else
        {
            properties.DisablePageChecksumVerification();
        }

        try
        {
            // The native reader copies the properties: they can be disposed once it is made.
            return new ParquetFileReader(path, properties);
        }
        catch (Exception e) when (ParquetThrow.IsParquetSharpError(e))
        {
            throw ParquetThrow.Unreadable(path, e);
        }
    }

    /// <summary>One column read's settings, passed down the generic read as one value; <c>Where</c> names the column, its types and the file for messages.</summary>
    private readonly record struct RowGroupRead(int Index, string Where, long Rows, short MaxDefinition, AllocationOptions ScratchOptions);
}
