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
            long rows = CheckedRows();
            string where = $"column '{column}' ({descriptor.PhysicalType}, {(isUtf8 ? "text" : "binary")}) of '{_path}'";
            var job = new RowGroupRead(index, where, rows, descriptor.MaxDefinitionLevel, (options ?? default) with { HugePages = false });
            return ReadStringsEntered(job, isUtf8, options);
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

    private unsafe NativeStringColumn ReadStringsEntered(in RowGroupRead job, bool isUtf8, AllocationOptions? options)
    {
        var blocks = new StringColumnBlocks(job.Rows, EstimateBytes(job.Index), job.MaxDefinition > 0, options);
        try
        {
            using var arrayBlock = LeasedBlock<ByteArray>.Scratch(true, ChunkFor(job.Rows), job.ScratchOptions);
            var sink = new ByteArrayBatchSink(blocks, arrayBlock.Pointer, job.Where);
            ReadRowGroups<ByteArray, ByteArrayBatchSink>(job, ref sink);
            return blocks.Build(isUtf8);
        }
        finally
        {
            blocks.Dispose();
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
