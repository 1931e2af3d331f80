using System.Numerics;
using Apache.Arrow;
using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

// A NativeStringColumn as Arrow arrays: utf8/binary (32-bit offsets) or their large variants (64-bit).
// The data block is shown as it is; each chunk's offsets are copied into a block the view owns, rebased
// to the chunk's data buffer. The column's offsets are public, so a caller may change them at any time:
// copying reads each one exactly once and checks the value it copies, so nothing Arrow or a C consumer
// of an export reads through the view's offsets can leave the data block, whatever happens to the
// column's offsets meanwhile or afterwards.
public sealed partial class NativeArrowColumn
{
    // An Arrow buffer is a Memory<byte>: at most int.MaxValue bytes.
    private const long MaxBufferBytes = int.MaxValue;

    internal static unsafe NativeArrowColumn CreateStrings(NativeStringColumn column, bool largeOffsets, long maxChunkRows, string paramName)
    {
        IArrowType type = column.IsUtf8
            ? (largeOffsets ? LargeStringType.Default : StringType.Default)
            : (largeOffsets ? LargeBinaryType.Default : BinaryType.Default);
        var memories = new List<IDisposable>();
        var arrays = new List<IArrowArray>();
        var addresses = new List<nint>();
        try
        {
            // Held for the whole build; each chunk's buffers take holds of their own.
            using MemoryHold offsetHold = column.Offsets.Hold();
            using MemoryHold dataHold = column.Data.Hold();
            using MemoryLease<long> offsetLease = column.Offsets.Lease();
            var source = new OffsetSource((long*)offsetLease.Pointer, column.Length, column.Data.Length, paramName);
            bool nullable = column.Validity is not null;
            long start = 0;
            long first = source.First();
            do
            {
                StringChunk chunk = largeOffsets
                    ? CopyOffsets<long>(ref source, start, first, maxChunkRows, nullable, memories)
                    : CopyOffsets<int>(ref source, start, first, maxChunkRows, nullable, memories);
                var dataMemory = NativeBlockMemory<byte>.View(column.Data, chunk.DataStart, chunk.DataLength);
                memories.Add(dataMemory);
                addresses.Add(dataMemory.Address);
                (ArrowBuffer validityBuffer, int nullCount) = ChunkValidity(column.Validity, start, chunk.Rows, memories);
                var data = new ArrayData(type, chunk.Rows, nullCount, 0, [validityBuffer, chunk.Offsets, new ArrowBuffer(dataMemory.Memory)]);
                arrays.Add(ArrowArrayFactory.BuildArray(data));
                start += chunk.Rows;
                first = chunk.NextFirst;
            }
            while (start < column.Length);

            return new NativeArrowColumn(new ChunkedArray(arrays), memories, [.. addresses]);
        }
        catch
        {
            foreach (IDisposable memory in memories)
            {
                memory.Dispose();
            }

            throw;
        }
    }

    // One chunk's rows from start: their offsets copied (each read once, checked: not below the one
    // before, not past the data block) and rebased to the chunk's data buffer, for as many rows as one
    // buffer's bytes, maxChunkRows and (with nulls) a multiple of 8 allow.
    private static unsafe StringChunk CopyOffsets<TOffset>(ref OffsetSource source, long start, long first, long maxChunkRows, bool nullable, List<IDisposable> memories)
        where TOffset : unmanaged, IBinaryInteger<TOffset>
    {
        long rowLimit = Math.Min(Math.Min(maxChunkRows, source.Length - start), (MaxBufferBytes / sizeof(TOffset)) - 1);
        long byteLimit = sizeof(TOffset) == sizeof(int) ? int.MaxValue : MaxBufferBytes;
        var block = new SafeArray<TOffset>((int)rowLimit + 1);
        try
        {
            // An empty chunk at the very end of the block shows its last byte, so that its buffer lies inside the block.
            long bufferStart = Math.Min(first, source.DataLength - 1);
            long end;
            int rows;
            using (MemoryLease<TOffset> lease = block.Lease())
            {
                TOffset* target = (TOffset*)lease.Pointer;
                target[0] = TOffset.CreateTruncating(first - bufferStart);
                long previous = first;
                rows = 0;
                while (rows < rowLimit)
                {
                    long next = source.Read(start + rows + 1, previous);
                    if (next - bufferStart > byteLimit)
                    {
                        break;
                    }

                    target[++rows] = TOffset.CreateTruncating(next - bufferStart);
                    previous = next;
                }

                if (rows < source.Length - start && nullable)
                {
                    rows &= ~7;
                }

                if (rows == 0 && start < source.Length)
                {
                    throw new ArgumentException($"The values from row {start:N0} take more than {byteLimit:N0} bytes within {(nullable ? 8 : 1)} row(s), more than one Arrow buffer (or 32-bit offsets) holds.", source.ParamName);
                }

                end = long.CreateTruncating(target[rows]) + bufferStart;
            }

            var memory = NativeBlockMemory<TOffset>.Owning(block, (rows + 1) * sizeof(TOffset));
            memories.Add(memory);
            long dataLength = Math.Max(1, end - bufferStart);
            return new StringChunk(rows, new ArrowBuffer(memory.Memory), bufferStart, (int)dataLength, end);
        }
        catch
        {
            block.Dispose();
            throw;
        }
    }

    private static unsafe (ArrowBuffer Buffer, int NullCount) ChunkValidity(HugeArray<byte>? validity, long start, int count, List<IDisposable> memories)
    {
        if (validity is null || count == 0)
        {
            return (ArrowBuffer.Empty, 0);
        }

        var memory = NativeBlockMemory<byte>.View(validity, start >> 3, (count + 7) >> 3);
        memories.Add(memory);
        int nullCount = count - (int)ValidityBitmap.CountSet((byte*)memory.Address, count);
        return (new ArrowBuffer(memory.Memory), nullCount);
    }

    /// <summary>One chunk: its rows, its offsets buffer (owned), where its data buffer starts and how long it is, and the offset the next chunk starts at.</summary>
    private readonly record struct StringChunk(int Rows, ArrowBuffer Offsets, long DataStart, int DataLength, long NextFirst);

    /// <summary>The column's offsets, read one at a time and checked as they are read.</summary>
    private readonly unsafe struct OffsetSource(long* offsets, long length, long dataLength, string paramName)
    {
        internal long Length => length;

        internal long DataLength => dataLength;

        internal string ParamName => paramName;

        internal long First()
        {
            long first = offsets[0];
            if ((ulong)first > (ulong)dataLength)
            {
                throw new ArgumentException($"The column's first offset is {first:N0}, outside its data block of {dataLength:N0} bytes.", paramName);
            }

            return first;
        }

        // Offset `index` (the end of row index - 1), which must not be below the row's start or past the block.
        internal long Read(long index, long previous)
        {
            long next = offsets[index];
            if (next < previous || next > dataLength)
            {
                throw new ArgumentException($"Row {index - 1:N0}'s offsets ({previous:N0} to {next:N0}) do not describe bytes inside the column's data block of {dataLength:N0} bytes; they were changed after the column was made.", paramName);
            }

            return next;
        }
    }
}
