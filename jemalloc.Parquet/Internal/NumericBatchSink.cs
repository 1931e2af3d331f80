using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.AddOns;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// The numeric read's batches (ReadColumn, ReadNullableColumn), into a writer's block that holds every
/// row. Direct: ParquetSharp decodes the values into the block itself; an optional column's values
/// arrive packed (nulls left out) and are spread to their rows in place, from the end back. Narrow: the
/// INT32 values land in a scratch block and are narrowed into the destination.
/// </summary>
/// <typeparam name="TPhysical">The values ParquetSharp decodes; int when narrowing.</typeparam>
/// <typeparam name="T">The element type read.</typeparam>
/// <param name="values">The writer whose block holds every row.</param>
/// <param name="narrowScratch">A scratch block for a batch's INT32 values when they are narrowed; null: they are decoded in place.</param>
/// <param name="bits">The cleared validity bitmap; null: the column is read without nulls.</param>
/// <param name="range">The values an 8- or 16-bit column may hold; null for any other.</param>
/// <param name="where">The column, its types and the file, as messages name them.</param>
internal unsafe struct NumericBatchSink<TPhysical, T>(NativeBufferWriter<T> values, int* narrowScratch, byte* bits, ParquetTypes.IntegerRange? range, string where) : IBatchSink<TPhysical>
    where TPhysical : unmanaged
    where T : unmanaged
{
    // The batch's rows in the writer's block, from Target to Take.
    private T* _destination;

    /// <summary>The null rows taken so far.</summary>
    internal long NullCount { get; private set; }

    public Span<TPhysical> Target(int count)
    {
        // The writer's block holds every row (its capacity), so this span is the batch's rows, never a growth.
        _destination = (T*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(values.GetSpan(count)));
        return new Span<TPhysical>(narrowScratch is null ? (TPhysical*)_destination : (TPhysical*)narrowScratch, count);
    }

    public void Take(long firstRow, int count, long valueCount, short* levels, short maxDefinition)
    {
        bool narrow = narrowScratch != null;
        var target = narrow ? (TPhysical*)narrowScratch : (TPhysical*)_destination;
        if (range is { } declared)
        {
            // INT32 values of an 8- or 16-bit column: each must be one its logical type can hold, or
            // narrowing (and widening into a wider element) would give a value the file never had.
            CheckRange((int*)target, valueCount, declared, where, firstRow);
        }

        if (levels is null || valueCount == count)
        {
            // No nulls in this batch: the values are in their rows already (or packed in order in the scratch block).
            if (narrow)
            {
                NarrowInto(_destination, narrowScratch, count);
            }

            if (bits != null && levels != null)
            {
                ValidityBitmap.SetRange(bits, firstRow, count);
            }
        }
        else
        {
            if (bits is null)
            {
                ParquetThrow.NullFound(where, firstRow, levels, maxDefinition, count);
            }

            NullCount += Spread(_destination, target, levels, maxDefinition, count, valueCount, narrow, bits, firstRow);
        }

        values.Advance(count);
    }

    // Puts packed values at their rows (null rows get default) and sets the valid rows' bits; returns the nulls.
    // In place (direct), it walks from the end back: value k never moves to a row before k.
    private static long Spread(T* destination, TPhysical* packed, short* levels, short maxDefinition, int count, long valueCount, bool narrow, byte* bits, long firstRow)
    {
        long nulls = 0;
        if (narrow)
        {
            int* source = (int*)packed;
            long next = 0;
            for (int i = 0; i < count; i++)
            {
                if (levels[i] == maxDefinition)
                {
                    Narrow(destination + i, source[next++]);
                    ValidityBitmap.Set(bits, firstRow + i);
                }
                else
                {
                    destination[i] = default;
                    nulls++;
                }
            }

            return nulls;
        }

        var target = (TPhysical*)destination;
        long last = valueCount - 1;
        for (int i = count - 1; i >= 0; i--)
        {
            if (levels[i] == maxDefinition)
            {
                target[i] = packed[last--];
                ValidityBitmap.Set(bits, firstRow + i);
            }
            else
            {
                target[i] = default;
                nulls++;
            }
        }

        return nulls;
    }

    private static void CheckRange(int* values, long count, ParquetTypes.IntegerRange range, string where, long firstRow)
    {
        for (long i = 0; i < count; i++)
        {
            int value = values[i];
            if (value < range.Min || value > range.Max)
            {
                ParquetThrow.InvalidData($"The {where} holds {value} in the batch from row {firstRow:N0}, outside its logical type {range.Name} ({range.Min} to {range.Max}).");
            }
        }
    }

    private static void NarrowInto(T* destination, int* source, int count)
    {
        for (int i = 0; i < count; i++)
        {
            Narrow(destination + i, source[i]);
        }
    }

    // An INT(8) or INT(16) column's value, stored as INT32, into its 1- or 2-byte element (truncation keeps it exactly).
    private static void Narrow(T* destination, int value)
    {
        if (sizeof(T) == 1)
        {
            *(byte*)destination = (byte)value;
        }
        else
        {
            *(ushort*)destination = (ushort)value;
        }
    }
}
