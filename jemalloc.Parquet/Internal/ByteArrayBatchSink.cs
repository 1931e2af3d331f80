using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A BYTE_ARRAY column's batches into a string column's blocks or a dictionary being built: ParquetSharp
/// decodes pointers into its page buffers (valid until the next batch) into a scratch block, whose bytes
/// the target copies at once.
/// </summary>
internal readonly unsafe struct ByteArrayBatchSink(IByteArraySink target, ByteArray* values, string where) : IBatchSink<ByteArray>
{
    public Span<ByteArray> Target(int count) => new(values, count);

    public void Take(long firstRow, int count, long valueCount, short* levels, short maxDefinition) =>
        target.Append(values, (int)valueCount, levels, maxDefinition, count, where, firstRow);
}
