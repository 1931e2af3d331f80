using jemalloc.AddOns;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A <see cref="NativeStringColumn"/> written as a BYTE_ARRAY column (STRING for text, no logical type for
/// binary): OPTIONAL when it has a validity bitmap, REQUIRED otherwise. The byte-array descriptors handed to
/// ParquetSharp point into the column's own data block, so its bytes are not copied before encoding; each
/// row's offsets are checked against the block first (they are public, so a caller may have changed them).
/// </summary>
internal sealed unsafe class NativeStringWriterColumn(string name, NativeStringColumn column)
    : WriterColumn(name, column.Length)
{
    internal override Node CreateNode()
    {
        using LogicalType logical = column.IsUtf8 ? LogicalType.String() : LogicalType.None();
        return new PrimitiveNode(Name, column.Validity is null ? Repetition.Required : Repetition.Optional, logical, PhysicalType.ByteArray);
    }

    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(column.Offsets.Hold());
        holds.Add(column.Data.Hold());
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
        using var offsetBlock = LeasedBlock<long>.Of(column.Offsets);
        using var dataBlock = LeasedBlock<byte>.Of(column.Data);
        using var validityBlock = LeasedBlock<byte>.Of(column.Validity);
        long dataLength = column.Data.Length;
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

                long from = offsets[row];
                long to = offsets[row + 1];
                if ((ulong)from > (ulong)to || (ulong)to > (ulong)dataLength || to - from > int.MaxValue)
                {
                    ParquetThrow.InvalidData($"Column '{Name}': row {row:N0}'s offsets ({from:N0} to {to:N0}) do not describe bytes inside its data block of {dataLength:N0} bytes; they were changed after the column was made.");
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
