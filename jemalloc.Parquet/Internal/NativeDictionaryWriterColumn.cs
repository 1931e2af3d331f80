using jemalloc.AddOns;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A <see cref="NativeDictionaryColumn"/> written as a BYTE_ARRAY column, as a
/// <see cref="NativeStringWriterColumn"/> is: each row's byte-array descriptor points at its value in the
/// dictionary's data block (no copy), after its index and the value's offsets are checked (they are
/// public, so a caller may have changed them). Parquet's encoder dictionary-encodes the pages (its
/// default), falling back to plain pages when a chunk's dictionary page fills.
/// </summary>
internal sealed unsafe class NativeDictionaryWriterColumn(string name, NativeDictionaryColumn column)
    : WriterColumn(name, column.Length)
{
    internal override Node CreateNode()
    {
        using LogicalType logical = column.IsUtf8 ? LogicalType.String() : LogicalType.None();
        return new PrimitiveNode(Name, column.Validity is null ? Repetition.Required : Repetition.Optional, logical, PhysicalType.ByteArray);
    }

    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(column.Indices.Hold());
        holds.Add(column.Dictionary.Offsets.Hold());
        holds.Add(column.Dictionary.Data.Hold());
        if (column.Validity is not null)
        {
            holds.Add(column.Validity.Hold());
        }
    }

    internal override void Write(ColumnWriter writer, long start, long count, AllocationOptions scratchOptions)
    {
        var typed = (ColumnWriter<ByteArray>)writer;
        int chunk = (int)Math.Min(ChunkRows, count);
        using var arrayBlock = LeasedBlock<ByteArray>.Scratch(true, chunk, scratchOptions);
        using var levelBlock = LeasedBlock<short>.Scratch(column.Validity is not null, chunk, scratchOptions);
        using var indexBlock = LeasedBlock<int>.Of(column.Indices);
        using var offsetBlock = LeasedBlock<long>.Of(column.Dictionary.Offsets);
        using var dataBlock = LeasedBlock<byte>.Of(column.Dictionary.Data);
        using var validityBlock = LeasedBlock<byte>.Of(column.Validity);
        long dictionaryLength = column.Dictionary.Length;
        long dataLength = column.Dictionary.Data.Length;
        int* indices = indexBlock.Pointer;
        long* offsets = offsetBlock.Pointer;
        byte* data = dataBlock.Pointer;
        byte* bits = validityBlock.Pointer;
        ByteArray* arrays = arrayBlock.Pointer;
        short* levels = levelBlock.Pointer;
        for (long done = 0; done < count;)
        {
            int batch = (int)Math.Min(count - done, chunk);
            long first = start + done;
            int present = 0;
            for (int i = 0; i < batch; i++)
            {
                long row = first + i;
                if (bits != null && !ValidityBitmap.IsSet(bits, row))
                {
                    levels[i] = 0;
                    continue;
                }

                int index = indices[row];
                if ((ulong)(uint)index >= (ulong)dictionaryLength)
                {
                    ParquetThrow.InvalidData($"Column '{Name}': row {row:N0}'s index is {index:N0}; the dictionary has {dictionaryLength:N0} values (the indices were changed after the column was made).");
                }

                long from = offsets[index];
                long to = offsets[index + 1];
                if ((ulong)from > (ulong)to || (ulong)to > (ulong)dataLength || to - from > int.MaxValue)
                {
                    ParquetThrow.InvalidData($"Column '{Name}': dictionary value {index:N0}'s offsets ({from:N0} to {to:N0}) do not describe bytes inside its data block of {dataLength:N0} bytes; they were changed after the column was made.");
                }

                arrays[present++] = new ByteArray((nint)(data + from), (int)(to - from));
                if (levels != null)
                {
                    levels[i] = 1;
                }
            }

            typed.WriteBatch(batch, levels == null ? default : new ReadOnlySpan<short>(levels, batch), default, new ReadOnlySpan<ByteArray>(arrays, present));
            done += batch;
        }
    }
}
