using jemalloc.AddOns;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// The flat types' batches (DECIMAL, fixed-size binary, FLOAT16): decoded packed (nulls left out) into
/// a scratch block, then handed value by value to <typeparamref name="TValues"/> at their rows, the
/// valid rows' bits set (no bitmap: a null throws, as ReadColumn does). ParquetSharp's
/// FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY values point into its page buffers, valid until the next batch:
/// the value sink copies or decodes them at once.
/// </summary>
/// <param name="values">Where each value goes.</param>
/// <param name="packed">A scratch block that holds a batch's values.</param>
/// <param name="bits">The cleared validity bitmap; null: the column is read without nulls.</param>
/// <param name="where">The column, its types and the file, as messages name them.</param>
internal unsafe struct FlatBatchSink<TPhysical, TValues>(TValues values, TPhysical* packed, byte* bits, string where) : IBatchSink<TPhysical>
    where TPhysical : unmanaged
    where TValues : struct, IValueSink<TPhysical>
{

    /// <summary>The null rows taken so far.</summary>
    internal long NullCount { get; private set; }

    public readonly Span<TPhysical> Target(int count) => new(packed, count);

    public void Take(long firstRow, int count, long valueCount, short* levels, short maxDefinition)
    {
        if (levels is null || valueCount == count)
        {
            for (int i = 0; i < count; i++)
            {
                values.Put(firstRow + i, packed[i]);
            }

            if (bits != null && levels != null)
            {
                ValidityBitmap.SetRange(bits, firstRow, count);
            }
        }
        else
        {
            NullCount += Scatter(levels, maxDefinition, count, firstRow);
        }
    }

    // A batch with nulls: the packed values go to their rows in order, the null rows are cleared.
    private long Scatter(short* levels, short maxDefinition, int count, long firstRow)
    {
        if (bits == null)
        {
            ParquetThrow.NullFound(where, firstRow, levels, maxDefinition, count);
        }

        long nulls = 0;
        int next = 0;
        for (int i = 0; i < count; i++)
        {
            if (levels[i] == maxDefinition)
            {
                values.Put(firstRow + i, packed[next++]);
                ValidityBitmap.Set(bits, firstRow + i);
            }
            else
            {
                values.PutNull(firstRow + i);
                nulls++;
            }
        }

        return nulls;
    }
}
