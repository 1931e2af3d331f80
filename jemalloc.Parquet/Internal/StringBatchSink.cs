using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A BYTE_ARRAY column's batches into a string column's blocks: ParquetSharp decodes pointers into its
/// page buffers (valid until the next batch) into a scratch block, whose bytes <see cref="StringColumnBlocks.Append"/> copies at once.
/// </summary>
internal readonly unsafe struct StringBatchSink(StringColumnBlocks blocks, ByteArray* values, string where) : IBatchSink<ByteArray>
{

    public Span<ByteArray> Target(int count) => new(values, count);

    public void Take(long firstRow, int count, long valueCount, short* levels, short maxDefinition) =>
        blocks.Append(values, (int)valueCount, levels, maxDefinition, count, where, firstRow);
}
