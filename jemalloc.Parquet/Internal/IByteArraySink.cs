using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>Where a BYTE_ARRAY column's decoded batches go: the plain string blocks or a dictionary being built.</summary>
internal unsafe interface IByteArraySink
{
    /// <summary>
    /// Appends a batch of <paramref name="count"/> rows: <paramref name="valueCount"/> values (nulls left
    /// out) and, for an optional column, their definition levels.
    /// </summary>
    /// <exception cref="InvalidDataException">The levels and values disagree.</exception>
    void Append(ByteArray* values, int valueCount, short* levels, short maxDefinition, int count, string where, long firstRow);
}
