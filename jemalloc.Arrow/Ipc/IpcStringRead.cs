using System.Buffers.Binary;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// Reads a Utf8, Binary, LargeUtf8 or LargeBinary column of every batch into one native offsets block
/// (64-bit, rebased so that the batches follow one another) and one data block: the offsets go
/// through a scratch block (32-bit ones are widened), checked to ascend inside their batch's data
/// buffer; the data bytes are read straight into the data block.
/// </summary>
internal static unsafe class IpcStringRead
{
    private const int ScratchBytes = 64 * 1024;

    /// <summary>Each batch's first and last offsets (checked against its data buffer), and the bytes of all batches.</summary>
    /// <exception cref="InvalidDataException">An offset is negative, the last is below the first, or the data buffer does not reach the last.</exception>
    internal static (long[] Extents, long Bytes) Extents(in IpcColumnRead read, bool large, byte* scratch)
    {
        List<IpcBatch> batches = read.Batches;
        long[] extents = new long[2 * batches.Count];
        long bytes = 0;
        for (int b = 0; b < batches.Count; b++)
        {
            IpcBatch batch = batches[b];
            if (batch.Length == 0)
            {
                continue;
            }

            (_, int buffer) = read.Locate(batch);
            long start = batch.BodyStart + batch.Buffers[2 * (buffer + 1)];
            int width = large ? 8 : 4;
            long first = OffsetAt(read, start, large, scratch);
            long last = OffsetAt(read, start + (batch.Length * width), large, scratch);
            if (first < 0 || last < first)
            {
                IpcThrow.InvalidData($"Record batch {batch.Index}'s offsets for column '{read.Name}' run from {first:N0} to {last:N0}.");
            }

            read.CheckBuffer(batch, buffer + 2, last, "data buffer");
            extents[2 * b] = first;
            extents[(2 * b) + 1] = last;
            bytes += last - first;
        }

        return (extents, bytes);
    }

    /// <summary>Reads every batch's offsets (rebased) and data into the blocks; <paramref name="offsets"/> has a slot for each row and one more.</summary>
    /// <exception cref="InvalidDataException">A batch's offsets do not ascend, or disagree with its extents.</exception>
    internal static void Read(in IpcColumnRead read, bool large, long[] extents, long* offsets, byte* data, byte* scratch)
    {
        long row = 0, written = 0;
        List<IpcBatch> batches = read.Batches;
        for (int b = 0; b < batches.Count; b++)
        {
            IpcBatch batch = batches[b];
            if (batch.Length == 0)
            {
                continue;
            }

            (_, int buffer) = read.Locate(batch);
            long first = extents[2 * b], last = extents[(2 * b) + 1];
            long position = batch.BodyStart + batch.Buffers[2 * (buffer + 1)];
            if (large)
            {
                // Straight into the block, then checked and rebased in place.
                read.ReadBytes(position, (byte*)(offsets + row), (batch.Length + 1) * sizeof(long));
                long previous = first;
                Rebase(read, batch, offsets + row, offsets + row, batch.Length + 1, first, last, written, ref previous);
            }
            else
            {
                long perChunk = ScratchBytes / sizeof(int);
                long previous = first;
                for (long done = 0; done <= batch.Length; done += perChunk)
                {
                    long count = Math.Min(perChunk, batch.Length + 1 - done);
                    read.ReadBytes(position + (done * sizeof(int)), scratch, count * sizeof(int));
                    Rebase(read, batch, (int*)scratch, offsets + row + done, count, first, last, written, ref previous);
                }
            }

            read.ReadBytes(batch.BodyStart + batch.Buffers[2 * (buffer + 2)] + first, data + written, last - first);
            written += last - first;
            row += batch.Length;
        }

        offsets[row] = written;
    }

    // Offsets of this machine's order (swapped from big-endian first), checked to ascend from the
    // batch's first to its last, moved so the batch's first byte lands at `written`.
    private static void Rebase<TOffset>(in IpcColumnRead read, IpcBatch batch, TOffset* source, long* destination, long count, long first, long last, long written, ref long previous)
        where TOffset : unmanaged
    {
        for (long i = 0; i < count; i++)
        {
            long value = sizeof(TOffset) == 8 ? *(long*)(source + i) : *(int*)(source + i);
            if (read.BigEndian)
            {
                value = sizeof(TOffset) == 8 ? BinaryPrimitives.ReverseEndianness(value) : BinaryPrimitives.ReverseEndianness((int)value);
            }

            if (value < previous || value > last)
            {
                IpcThrow.InvalidData($"Record batch {batch.Index}'s offsets for column '{read.Name}' do not ascend from {first:N0} to {last:N0}: one is {value:N0}, after {previous:N0}.");
            }

            destination[i] = written + (value - first);
            previous = value;
        }
    }

    private static long OffsetAt(in IpcColumnRead read, long position, bool large, byte* scratch)
    {
        read.ReadBytes(position, scratch, large ? 8 : 4);
        var bytes = new ReadOnlySpan<byte>(scratch, large ? 8 : 4);
        return large
            ? (read.BigEndian ? BinaryPrimitives.ReadInt64BigEndian(bytes) : BinaryPrimitives.ReadInt64LittleEndian(bytes))
            : (read.BigEndian ? BinaryPrimitives.ReadInt32BigEndian(bytes) : BinaryPrimitives.ReadInt32LittleEndian(bytes));
    }
}
