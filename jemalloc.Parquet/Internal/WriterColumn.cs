using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>One column a <see cref="NativeParquetWriter"/> writes: its schema node and how its rows reach ParquetSharp.</summary>
internal abstract class WriterColumn(string name, long length)
{
    /// <summary>Rows handed to ParquetSharp per call; the scratch blocks hold this many.</summary>
    internal const int ChunkRows = 64 * 1024;

    internal string Name { get; } = name;

    internal long Length { get; } = length;

    /// <summary>The column's schema node (the caller disposes it).</summary>
    internal abstract Node CreateNode();

    /// <summary>
    /// Holds the column's memory for the whole write, so it cannot be freed or reset meanwhile and no
    /// caller's <c>Release()</c> can end the hold: adds one hold per structure to <paramref name="holds"/>,
    /// which the caller disposes after the write.
    /// </summary>
    /// <exception cref="ObjectDisposedException">Its memory was disposed since it was added.</exception>
    internal abstract void Hold(List<MemoryHold> holds);

    /// <summary>Writes rows <c>[start, start + count)</c> into the row group's current column.</summary>
    internal abstract void Write(ColumnWriter writer, long start, long count, AllocationOptions scratchOptions);
}
