using jemalloc.AddOns;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A numeric column written from a native array, with an optional validity bitmap (Arrow's layout).
/// Values of the physical type's own size go to ParquetSharp straight from the array; 1- and 2-byte
/// integers are widened to INT32 in a scratch block first. A DATE, TIME or TIMESTAMP column passes its
/// logical type; any other takes the one of its element type.
/// </summary>
internal sealed unsafe class NumericWriterColumn<T>(string name, NativeBuffer<T> values, long length, NativeBuffer<byte>? validity, Func<LogicalType>? logicalType = null)
    : WriterColumn(name, length)
    where T : unmanaged, IEquatable<T>
{
    private static readonly bool Widens = sizeof(T) < 4 && typeof(T) != typeof(bool);

    internal override Node CreateNode()
    {
        using LogicalType logical = logicalType is null ? ParquetTypes.LogicalOf<T>() : logicalType();
        return new PrimitiveNode(Name, validity is null ? Repetition.Required : Repetition.Optional, logical, ParquetTypes.PhysicalOf<T>());
    }

    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(values.Hold());
        if (validity is not null)
        {
            holds.Add(validity.Hold());
        }
    }

    internal override void Write(ColumnWriter writer, long start, long count, AllocationOptions scratchOptions)
    {
        switch (ParquetTypes.PhysicalOf<T>())
        {
            case PhysicalType.Boolean:
                WriteAs((ColumnWriter<bool>)writer, start, count, scratchOptions);
                break;
            case PhysicalType.Int32:
                WriteAs((ColumnWriter<int>)writer, start, count, scratchOptions);
                break;
            case PhysicalType.Int64:
                WriteAs((ColumnWriter<long>)writer, start, count, scratchOptions);
                break;
            case PhysicalType.Int96:
                WriteAs((ColumnWriter<Int96>)writer, start, count, scratchOptions);
                break;
            case PhysicalType.Float:
                WriteAs((ColumnWriter<float>)writer, start, count, scratchOptions);
                break;
            default:
                WriteAs((ColumnWriter<double>)writer, start, count, scratchOptions);
                break;
        }
    }

    private void WriteAs<TPhysical>(ColumnWriter<TPhysical> writer, long start, long count, AllocationOptions scratchOptions)
        where TPhysical : unmanaged
    {
        int chunk = (int)Math.Min(ChunkRows, count);
        using var valueBlock = LeasedBlock<T>.Of(values);
        using var validityBlock = LeasedBlock<byte>.Of(validity);
        using var wideBlock = LeasedBlock<int>.Scratch(Widens, chunk, scratchOptions);
        // Definition levels, then repetition levels: all zero for a flat column, but ParquetSharp's
        // WriteBatchSpaced requires a span of them.
        using var levelBlock = LeasedBlock<short>.Scratch(validity is not null, chunk * 2, scratchOptions);
        T* source = valueBlock.Pointer;
        byte* bits = validityBlock.Pointer;
        int* wide = wideBlock.Pointer;
        short* levels = levelBlock.Pointer;
        for (long done = 0; done < count;)
        {
            int batch = (int)Math.Min(count - done, chunk);
            long row = start + done;
            TPhysical* batchValues = (TPhysical*)(source + row);
            if (wide != null)
            {
                Widen(source + row, wide, batch);
                batchValues = (TPhysical*)wide;
            }

            var span = new ReadOnlySpan<TPhysical>(batchValues, batch);
            if (bits is null)
            {
                writer.WriteBatch(span);
            }
            else
            {
                for (int i = 0; i < batch; i++)
                {
                    levels[i] = ValidityBitmap.IsSet(bits, row + i) ? (short)1 : (short)0;
                }

                // The values stay spaced (a null row's slot is skipped); the bitmap is read from the batch's first bit.
                long firstByte = row >> 3;
                int bitmapBytes = (int)(((row & 7) + batch + 7) >> 3);
                writer.WriteBatchSpaced(batch, new ReadOnlySpan<short>(levels, batch), new ReadOnlySpan<short>(levels + chunk, batch), new ReadOnlySpan<byte>(bits + firstByte, bitmapBytes), row & 7, span);
            }

            done += batch;
        }
    }

    private static void Widen(T* source, int* destination, int count)
    {
        for (int i = 0; i < count; i++)
        {
            destination[i] = typeof(T) == typeof(sbyte) ? *(sbyte*)(source + i)
                : typeof(T) == typeof(byte) ? *(byte*)(source + i)
                : typeof(T) == typeof(short) ? *(short*)(source + i)
                : *(ushort*)(source + i);
        }
    }
}
