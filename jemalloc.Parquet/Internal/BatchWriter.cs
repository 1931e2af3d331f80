using jemalloc.AddOns;
using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>One batch of a flat column to ParquetSharp: as it is when there is no bitmap, spaced (a null row's slot skipped) when there is.</summary>
internal static unsafe class BatchWriter
{
    /// <summary>
    /// Writes <paramref name="batch"/> rows from <paramref name="row"/>; <paramref name="levels"/> is a scratch block of
    /// <c>2 * <paramref name="chunk"/></c> levels (definition, then repetition), needed only with <paramref name="bits"/>.
    /// </summary>
    internal static void Write<TPhysical>(ColumnWriter<TPhysical> writer, ReadOnlySpan<TPhysical> values, byte* bits, short* levels, int chunk, long row, int batch)
        where TPhysical : unmanaged
    {
        if (bits is null)
        {
            writer.WriteBatch(values);
            return;
        }

        for (int i = 0; i < batch; i++)
        {
            levels[i] = ValidityBitmap.IsSet(bits, row + i) ? (short)1 : (short)0;
        }

        long firstByte = row >> 3;
        int bitmapBytes = (int)(((row & 7) + batch + 7) >> 3);
        writer.WriteBatchSpaced(batch, new ReadOnlySpan<short>(levels, batch), new ReadOnlySpan<short>(levels + chunk, batch), new ReadOnlySpan<byte>(bits + firstByte, bitmapBytes), row & 7, values);
    }
}
