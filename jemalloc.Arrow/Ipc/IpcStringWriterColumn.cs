using System.Buffers.Binary;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A <see cref="NativeStringColumn"/> written as Utf8/Binary (32-bit offsets) or LargeUtf8/LargeBinary
/// (64-bit): each batch's offsets are rebased to start at 0 (and narrowed) through the scratch block;
/// its data bytes go to the stream straight from the column's data block. The offsets are public
/// arrays, so every one used is checked against the data block first.
/// </summary>
internal sealed unsafe class IpcStringWriterColumn(string name, NativeStringColumn column, bool large)
    : IpcWriterColumn(name, IpcType.Strings(column.IsUtf8, large), column.Length, column.Validity)
{
    internal override int ValueBuffers => 2;

    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(column.Offsets.Hold());
        holds.Add(column.Data.Hold());
        base.Hold(holds);
    }

    internal override void CheckBatches(long batchSize)
    {
        if (large)
        {
            return;
        }

        for (long start = 0; start < Length; start += batchSize)
        {
            (long first, long last) = Extent(start, Math.Min(batchSize, Length - start));
            if (last - first > int.MaxValue)
            {
                IpcThrow.InvalidOperation($"Rows {start:N0} to {Math.Min(start + batchSize, Length) - 1:N0} of column '{Name}' hold {last - first:N0} bytes, more than 32-bit offsets reach: write it with large offsets or in smaller batches.");
            }
        }
    }

    internal override void ValueBufferLengths(long start, long count, Span<long> lengths)
    {
        (long first, long last) = Extent(start, count);
        lengths[0] = (count + 1) * (large ? sizeof(long) : sizeof(int));
        lengths[1] = last - first;
    }

    internal override void WriteValues(IpcOutput output, long start, long count, byte* scratch, int scratchBytes, bool bigEndian)
    {
        (long first, long last) = Extent(start, count);
        using (MemoryLease<long> offsetLease = column.Offsets.Lease())
        {
            long* offsets = (long*)offsetLease.Pointer + start;
            int width = large ? sizeof(long) : sizeof(int);
            int perChunk = scratchBytes / width;
            long previous = first;
            for (long done = 0; done <= count;)
            {
                int n = (int)Math.Min(perChunk, count + 1 - done);
                for (int i = 0; i < n; i++)
                {
                    long value = offsets[done + i];
                    if (value < previous || value > last)
                    {
                        IpcThrow.InvalidData($"The offsets of column '{Name}' do not ascend at row {start + done + i:N0} ({value:N0} after {previous:N0}); they were changed after the column was made.");
                    }

                    previous = value;
                    long rebased = value - first;
                    if (large)
                    {
                        ((long*)scratch)[i] = bigEndian ? BinaryPrimitives.ReverseEndianness(rebased) : rebased;
                    }
                    else
                    {
                        ((int*)scratch)[i] = bigEndian ? BinaryPrimitives.ReverseEndianness((int)rebased) : (int)rebased;
                    }
                }

                output.Write(new ReadOnlySpan<byte>(scratch, n * width));
                done += n;
            }

            output.Pad();
        }

        using MemoryLease<byte> dataLease = column.Data.Lease();
        output.WriteNative((byte*)dataLease.Pointer + first, last - first);
        output.Pad();
    }

    // The first and last offsets of rows [start, start + count), checked to lie in the data block in order.
    private (long First, long Last) Extent(long start, long count)
    {
        using MemoryLease<long> lease = column.Offsets.Lease();
        long first = lease[start];
        long last = lease[start + count];
        if (first < 0 || last < first || last > column.Data.Length)
        {
            IpcThrow.InvalidData($"The offsets of column '{Name}' give rows {start:N0} to {start + count - 1:N0} bytes {first:N0} to {last:N0} of a data block of {column.Data.Length:N0}; they were changed after the column was made.");
        }

        return (first, last);
    }
}
