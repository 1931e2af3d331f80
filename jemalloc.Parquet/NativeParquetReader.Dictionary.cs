using jemalloc.Parquet.Internal;
using ParquetSharp;

namespace jemalloc.Parquet;

// BYTE_ARRAY columns into a NativeDictionaryColumn. ParquetSharp's column reader gives decoded values,
// not a chunk's dictionary page and indices (parquet-cpp's ReadBatchWithDictionary is not exposed), and
// a chunk may fall back to plain pages when its dictionary page fills; so the dictionary is built while
// decoding, each value looked up by its bytes in a hash table in native memory: one dictionary for the
// whole column, whatever the pages' encodings, and no managed object per value.
public sealed partial class NativeParquetReader
{
    /// <summary>Reads a BYTE_ARRAY column (UTF-8 strings or binary, nulls included) into a new dictionary-encoded column, with the library's default options.</summary>
    /// <inheritdoc cref="ReadDictionaryColumn(string, AllocationOptions)"/>
    public NativeDictionaryColumn ReadDictionaryColumn(string column) => ReadDictionary(column, null);

    /// <summary>
    /// Reads a BYTE_ARRAY column, nulls included, into a new <see cref="NativeDictionaryColumn"/>, allocated
    /// with <paramref name="options"/>: each distinct value once in the dictionary (in the order first
    /// read), and a 32-bit index per row. Text or binary as for <see cref="ReadStringColumn(string, AllocationOptions)"/>.
    /// </summary>
    /// <remarks>
    /// Any column can be read so, whatever its pages' encodings; a column of few distinct values (categories,
    /// codes, countries) takes far less memory than its plain layout, one whose values are mostly distinct
    /// takes 4 bytes a row more. It is not refused: which layout pays is the caller's knowledge of the data
    /// (a column's distinct count is not in Parquet's footer).
    /// </remarks>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the column's blocks (and the reader's scratch blocks) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (none for a file without rows), which the caller owns; it has a validity bitmap only if a row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The file has no column of that name, or it is not a BYTE_ARRAY column of strings or binary (a DECIMAL stored as BYTE_ARRAY is read with <c>ReadDecimalColumn</c>); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is repeated (a list or map).</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader; or the column has more than 2^30 distinct values (the message names the file and column; read it with <see cref="ReadStringColumn(string, AllocationOptions)"/>).</exception>
    /// <exception cref="InvalidDataException">The column's chunks or pages hold fewer or more rows than the file's metadata says; or a page cannot be decoded, decompressed or fails its checksum (ParquetSharp's exception is the inner one); the message names the file, the column and the row group.</exception>
    /// <exception cref="OutOfMemoryException">The column cannot be allocated.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NativeDictionaryColumn ReadDictionaryColumn(string column, AllocationOptions options) => ReadDictionary(column, options);

    private NativeDictionaryColumn ReadDictionary(string column, AllocationOptions? options)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            ColumnDescriptor descriptor = _schema.Column(index);
            bool isUtf8 = ByteArrayTypes.CheckReadableAsStrings(descriptor, column, _path, nameof(column));
            long rows = CheckedRows();
            string where = $"column '{column}' ({descriptor.PhysicalType}, {(isUtf8 ? "text" : "binary")}) of '{_path}'";
            // Room for every row up front: the indices never grow (nor copy), and untouched room costs nothing.
            using NativeDictionaryColumnBuilder builder = options is { } chosen ? new NativeDictionaryColumnBuilder(isUtf8, chosen, rows) : new NativeDictionaryColumnBuilder(isUtf8, rows);
            var job = new RowGroupRead(index, where, rows, descriptor.MaxDefinitionLevel, (options ?? default) with { HugePages = false });
            try
            {
                ReadValues(job, new DictionaryColumnSink(builder));
            }
            catch (InvalidOperationException e) when (builder.DistinctCount >= NativeDictionaryColumnBuilder.MaxDistinctCount)
            {
                throw new InvalidOperationException($"The {where} has more than {NativeDictionaryColumnBuilder.MaxDistinctCount:N0} distinct values, more than a dictionary column holds (after {builder.Count:N0} rows); read it with ReadStringColumn.", e);
            }

            return builder.Build();
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

    private unsafe void ReadValues(in RowGroupRead job, DictionaryColumnSink target)
    {
        using var arrayBlock = LeasedBlock<ByteArray>.Scratch(true, ChunkFor(job.Rows), job.ScratchOptions);
        var sink = new ByteArrayBatchSink(target, arrayBlock.Pointer, job.Where);
        ReadRowGroups<ByteArray, ByteArrayBatchSink>(job, ref sink);
    }
}
