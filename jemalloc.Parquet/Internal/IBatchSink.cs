namespace jemalloc.Parquet.Internal;

/// <summary>
/// What one kind of column read does with the batches the reader's row-group loop decodes: where
/// ParquetSharp decodes each batch, and what becomes of it. The loop does the rest (the row counts,
/// the iteration over row groups and batches, the wrapping of ParquetSharp's exceptions). A struct
/// per kind, passed to the loop by reference as a constrained generic, so the JIT specialises the
/// loop for each and the decode path makes no virtual call and no managed allocation.
/// </summary>
/// <typeparam name="TPhysical">The values ParquetSharp decodes: bool, int, long, Int96, float, double, FixedLenByteArray or ByteArray.</typeparam>
internal unsafe interface IBatchSink<TPhysical>
    where TPhysical : unmanaged
{
    /// <summary>Where the next batch's values (nulls left out) are decoded: room for <paramref name="count"/> values.</summary>
    Span<TPhysical> Target(int count);

    /// <summary>
    /// Takes the batch just decoded into <see cref="Target(int)"/>: <paramref name="count"/> rows from
    /// <paramref name="firstRow"/>, of which <paramref name="valueCount"/> have values, and their
    /// definition levels (null for a column that cannot hold nulls).
    /// </summary>
    /// <exception cref="InvalidDataException">A value is not one the column can hold, or the levels and values disagree.</exception>
    /// <exception cref="InvalidOperationException">A row is null and the column is read as one without nulls.</exception>
    void Take(long firstRow, int count, long valueCount, short* levels, short maxDefinition);
}
