using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A FIXED_LEN_BYTE_ARRAY column written from a native block of <paramref name="byteWidth"/> bytes a row
/// (fixed-size binary, UUID, FLOAT16 from <see cref="Half"/>), with an optional validity bitmap. ParquetSharp
/// is handed pointers into the block itself: the values are not copied on the way.
/// </summary>
internal sealed unsafe class FixedWidthWriterColumn<T>(string name, NativeBuffer<T> values, long length, NativeBuffer<byte>? validity, int byteWidth, Func<LogicalType> logicalType)
    : WriterColumn(name, length)
    where T : unmanaged, IEquatable<T>
{
    internal override Node CreateNode()
    {
        using LogicalType logical = logicalType();
        return new PrimitiveNode(Name, validity is null ? Repetition.Required : Repetition.Optional, logical, PhysicalType.FixedLenByteArray, byteWidth);
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
        var typed = (ColumnWriter<FixedLenByteArray>)writer;
        int chunk = (int)Math.Min(ChunkRows, count);
        using var valueBlock = LeasedBlock<T>.Of(values);
        using var validityBlock = LeasedBlock<byte>.Of(validity);
        using var pointerBlock = LeasedBlock<nint>.Scratch(true, chunk, scratchOptions);
        using var levelBlock = LeasedBlock<short>.Scratch(validity is not null, chunk * 2, scratchOptions);
        byte* source = (byte*)valueBlock.Pointer;
        byte* bits = validityBlock.Pointer;
        var pointers = (FixedLenByteArray*)pointerBlock.Pointer;
        short* levels = levelBlock.Pointer;
        for (long done = 0; done < count;)
        {
            int batch = (int)Math.Min(count - done, chunk);
            long row = start + done;
            for (int i = 0; i < batch; i++)
            {
                pointers[i] = new FixedLenByteArray((nint)(source + ((row + i) * byteWidth)));
            }

            BatchWriter.Write(typed, new ReadOnlySpan<FixedLenByteArray>(pointers, batch), bits, levels, chunk, row, batch);
            done += batch;
        }
    }
}
