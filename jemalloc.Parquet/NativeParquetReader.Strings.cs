using jemalloc.Parquet.Internal;
using ParquetSharp;

namespace jemalloc.Parquet;

// BYTE_ARRAY columns (strings, binary, JSON, enums) into a NativeStringColumn: ParquetSharp decodes a
// batch of values (any encoding: plain, dictionary, delta length, delta byte array) into pointers to its
// page buffers, which stay valid until the next batch; their bytes are copied once into the column's
// growing data block and their ends written as 64-bit offsets. No managed object is made per value.
public sealed partial class NativeParquetReader
{
    /// <summary>Reads a BYTE_ARRAY column (UTF-8 strings or binary, nulls included) into a new native string column, with the library's default options.</summary>
    /// <inheritdoc cref="ReadStringColumn(string, AllocationOptions)"/>
    public NativeStringColumn ReadStringColumn(string column) => ReadStrings(column, null);

    /// <summary>
    /// Reads a BYTE_ARRAY column, nulls included, into a new <see cref="NativeStringColumn"/> in Arrow's
    /// layout, allocated with <paramref name="options"/>. A column of logical type STRING, ENUM or JSON is
    /// text (<see cref="NativeStringColumn.IsUtf8"/>); one of no logical type, BSON, or a logical type
    /// this version of Parquet does not know, is binary.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the column's blocks (and the reader's scratch blocks) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (none for a file without rows), which the caller owns; it has a validity bitmap only if a row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or it is not a BYTE_ARRAY column of strings or binary (a DECIMAL stored as BYTE_ARRAY is read with <c>ReadDecimalColumn</c>); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says, or a value is longer than 2 GiB.</exception>
    /// <exception cref="OutOfMemoryException">The column cannot be allocated.</exception>
    /// <exception cref="InvalidDataException">A page cannot be decoded, decompressed or fails its checksum (ParquetSharp's exception is the inner one); the message names the file, the column and the row group.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NativeStringColumn ReadStringColumn(string column, AllocationOptions options) => ReadStrings(column, options);

    private NativeStringColumn ReadStrings(string column, AllocationOptions? options)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            bool isUtf8 = ByteArrayTypes.CheckReadableAsStrings(descriptor, column, _path, nameof(column));
            long rows = _metadata.NumRows;
            CheckRowCounts(rows);
            string where = $"column '{column}' ({descriptor.PhysicalType}, {(isUtf8 ? "text" : "binary")}) of '{_path}'";
            return ReadStringsEntered(index, where, rows, descriptor.MaxDefinitionLevel, isUtf8, options);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private NativeStringColumn ReadStringsEntered(int index, string where, long rows, short maxDefinition, bool isUtf8, AllocationOptions? options)
    {
        var builder = new StringColumnBlocks(rows, EstimateBytes(index), maxDefinition > 0, options);
        try
        {
            ReadByteArrays(index, where, rows, maxDefinition, options, builder);
            return builder.Build(isUtf8);
        }
        finally
        {
            builder.Dispose();
        }
    }

    // Decodes every row group's values of a BYTE_ARRAY column, a batch at a time, into the sink, and
    // checks the rows against the metadata's counts.
    private unsafe void ReadByteArrays(int index, string where, long rows, short maxDefinition, AllocationOptions? options, IByteArraySink sink)
    {
        AllocationOptions scratchOptions = (options ?? default) with { HugePages = false };
        int chunk = (int)Math.Clamp(rows, 1, ChunkRows);
        using var levelBlock = LeasedBlock<short>.Scratch(maxDefinition > 0, chunk, scratchOptions);
        using var arrayBlock = LeasedBlock<ByteArray>.Scratch(true, chunk, scratchOptions);
        short* levels = levelBlock.Pointer;
        ByteArray* values = arrayBlock.Pointer;
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
                using ColumnReader reader = group.Column(index);
                var typed = (ColumnReader<ByteArray>)reader;
                while (left > 0)
                {
                    int batch = (int)Math.Min(left, chunk);
                    if (row + batch > rows)
                    {
                        ParquetThrow.InvalidData($"The {where} holds more rows than the file's {rows:N0}.");
                    }

                    long read = typed.ReadBatch(
                        batch,
                        levels is null ? default : new Span<short>(levels, batch),
                        default,
                        new Span<ByteArray>(values, batch),
                        out long valuesRead);
                    if (read <= 0)
                    {
                        ParquetThrow.InvalidData($"The {where} ends at row {row:N0} of row group {g}, which the metadata says has {groupRows:N0} rows.");
                    }

                    sink.Append(values, (int)valuesRead, levels, maxDefinition, (int)read, where, row);
                    row += read;
                    left -= read;
                }

                if (typed.HasNext)
                {
                    ParquetThrow.InvalidData($"The {where} holds more values in row group {g} than the {groupRows:N0} rows the file's metadata declares for it.");
                }
            }
        }
        catch (ParquetException e)
        {
            throw ParquetThrow.DecodeFailed(where, g, row, e);
        }

        if (row != rows)
        {
            ParquetThrow.InvalidData($"The {where} holds {row:N0} rows; the file's metadata says {rows:N0}.");
        }
    }

    // The bytes the column's values take, as far as the footer tells: its chunks' uncompressed sizes (a
    // dictionary-encoded chunk's are smaller than its values, and the data block grows past them). A
    // forged footer cannot make it more than 16 times the file's size (compression rarely passes that;
    // past it the block grows by doubling) or 1 GiB, whichever is more.
    private long EstimateBytes(int index)
    {
        long limit = Math.Max(1L << 30, 16 * new FileInfo(_path).Length);
        long total = 0;
        int groups = _metadata.NumRowGroups;
        for (int g = 0; g < groups; g++)
        {
            using RowGroupReader group = _file.RowGroup(g);
            using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(index);
            total += Math.Max(0, chunk.TotalUncompressedSize);
            if (total >= limit)
            {
                return limit;
            }
        }

        return total;
    }
}
