using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A column of <see cref="StoredUtf8String"/> values written as an OPTIONAL UTF-8 (BYTE_ARRAY, STRING)
/// column: <see langword="default"/> is null. Each batch's bytes are gathered into one native scratch
/// block, which the batch's byte-array descriptors point into; nothing managed is made per row.
/// </summary>
internal sealed unsafe class StringWriterColumn(string name, NativeBuffer<StoredUtf8String> values, long length)
    : WriterColumn(name, length)
{
    internal override Node CreateNode()
    {
        using LogicalType logical = LogicalType.String();
        return new PrimitiveNode(Name, Repetition.Optional, logical, PhysicalType.ByteArray);
    }

    internal override void Hold(List<MemoryHold> holds) => holds.Add(values.Hold());

    internal override void Write(ColumnWriter writer, long start, long count, AllocationOptions scratchOptions)
    {
        var typed = (ColumnWriter<ByteArray>)writer;
        int chunk = (int)Math.Min(ChunkRows, count);
        using var arrayBlock = LeasedBlock<ByteArray>.Scratch(true, chunk, scratchOptions);
        using var levelBlock = LeasedBlock<short>.Scratch(true, chunk, scratchOptions);
        HugeArray<byte>? bytesBlock = null;
        try
        {
            using var valueBlock = LeasedBlock<StoredUtf8String>.Of(values);
            StoredUtf8String* source = valueBlock.Pointer;
            ByteArray* arrays = arrayBlock.Pointer;
            short* levels = levelBlock.Pointer;
            for (long done = 0; done < count;)
            {
                int batch = (int)Math.Min(count - done, chunk);
                StoredUtf8String* strings = source + start + done;
                long total = 0;
                for (int i = 0; i < batch; i++)
                {
                    // Length checks the string's store block is live (ObjectDisposedException if not).
                    total += strings[i].IsDefault ? 0 : strings[i].Length;
                }

                if (bytesBlock is null || bytesBlock.Length < total)
                {
                    bytesBlock?.Dispose();
                    bytesBlock = null;
                    bytesBlock = new HugeArray<byte>(Math.Max(total, 4096), scratchOptions);
                }

                int present = 0;
                using (MemoryLease<byte> bytesLease = bytesBlock.Lease())
                {
                    byte* bytes = (byte*)bytesLease.Pointer;
                    long offset = 0;
                    for (int i = 0; i < batch; i++)
                    {
                        if (strings[i].IsDefault)
                        {
                            levels[i] = 0;
                            continue;
                        }

                        int byteCount = strings[i].Length;
                        strings[i].CopyTo(new Span<byte>(bytes + offset, byteCount));
                        arrays[present++] = new ByteArray((nint)(bytes + offset), byteCount);
                        levels[i] = 1;
                        offset += byteCount;
                    }

                    typed.WriteBatch(batch, new ReadOnlySpan<short>(levels, batch), default, new ReadOnlySpan<ByteArray>(arrays, present));
                }

                done += batch;
            }
        }
        finally
        {
            bytesBlock?.Dispose();
        }
    }
}
