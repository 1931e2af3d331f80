using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A BYTE_ARRAY column's decoded batches into a <see cref="NativeDictionaryColumnBuilder"/>: each value is
/// looked up by its bytes (ParquetSharp's pointer into its page buffer, valid for the batch) in the
/// builder's native hash table, so a value is copied only the first time it is seen.
/// </summary>
internal sealed unsafe class DictionaryColumnSink(NativeDictionaryColumnBuilder builder) : IByteArraySink
{
    public void Append(ByteArray* values, int valueCount, short* levels, short maxDefinition, int count, string where, long firstRow)
    {
        // The reader's loop has checked that valueCount is exactly the rows whose level is maxDefinition.
        int next = 0;
        for (int i = 0; i < count; i++)
        {
            if (levels is not null && levels[i] != maxDefinition)
            {
                builder.AppendNull();
                continue;
            }

            ByteArray value = values[next++];
            if (value.Length < 0)
            {
                ParquetThrow.InvalidData($"The {where} gave a value of {value.Length:N0} bytes at row {firstRow + i:N0}.");
            }

            builder.Append(new ReadOnlySpan<byte>((void*)value.Pointer, value.Length));
        }
    }
}
