using Apache.Arrow;
using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

// A NativeStringColumn as Arrow arrays: utf8/binary (32-bit offsets) or their large variants (64-bit).
// The data block is always shown as it is. With 64-bit offsets and data that fits one Arrow buffer, the
// offsets block is shown as it is too (each chunk sees its rows' offsets and the data from byte 0);
// otherwise each chunk gets offsets of its own, rebased to its first value, in a block the view owns.
public sealed partial class NativeArrowColumn
{
    // An Arrow buffer is a Memory<byte>: at most int.MaxValue bytes.
    private const long MaxBufferBytes = int.MaxValue;

    // The public parameter the checks below name: ToArrow's column.
    private const string ColumnParameter = "column";

    internal static unsafe NativeArrowColumn CreateStrings(NativeStringColumn column, bool largeOffsets, long maxChunkRows)
    {
        IArrowType type = column.IsUtf8
            ? (largeOffsets ? LargeStringType.Default : StringType.Default)
            : (largeOffsets ? LargeBinaryType.Default : BinaryType.Default);
        int offsetSize = largeOffsets ? sizeof(long) : sizeof(int);
        var memories = new List<IDisposable>();
        var arrays = new List<IArrowArray>();
        var addresses = new List<nint>();
        try
        {
            // Held for the whole build; each chunk's buffers take holds of their own.
            using MemoryHold offsetHold = column.Offsets.Hold();
            using MemoryHold dataHold = column.Data.Hold();
            using MemoryLease<long> offsetLease = column.Offsets.Lease();
            long* offsets = (long*)offsetLease.Pointer;
            long length = column.Length;
            long dataLength = column.Data.Length;
            CheckOffsets(offsets, length, dataLength, ColumnParameter);
            bool sharedOffsets = largeOffsets && offsets[length] <= MaxBufferBytes;
            long start = 0;
            do
            {
                long end = ChunkEnd(offsets, start, length, sharedOffsets, offsetSize, maxChunkRows, column.Validity is not null, ColumnParameter);
                int count = (int)(end - start);
                long dataStart = sharedOffsets ? 0 : offsets[start];
                long dataEnd = Math.Max(offsets[end], dataStart);
                // An empty chunk still shows one byte of the block, so its buffer has an address.
                var dataMemory = NativeBlockMemory<byte>.View(column.Data, dataStart, (int)Math.Max(1, Math.Min(dataEnd - dataStart, dataLength - dataStart)));
                memories.Add(dataMemory);
                addresses.Add(dataMemory.Address);
                ArrowBuffer offsetBuffer = sharedOffsets
                    ? new ArrowBuffer(Track(memories, NativeBlockMemory<long>.View(column.Offsets, start * sizeof(long), (count + 1) * sizeof(long))).Memory)
                    : OwnOffsets(memories, offsets + start, count, largeOffsets, ColumnParameter);
                (ArrowBuffer validityBuffer, int nullCount) = ChunkValidity(column.Validity, start, count, memories);
                var data = new ArrayData(type, count, nullCount, 0, [validityBuffer, offsetBuffer, new ArrowBuffer(dataMemory.Memory)]);
                arrays.Add(ArrowArrayFactory.BuildArray(data));
                start = end;
            }
            while (start < length);

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

    private static TMemory Track<TMemory>(List<IDisposable> memories, TMemory memory)
        where TMemory : IDisposable
    {
        memories.Add(memory);
        return memory;
    }

    // Offsets are public, so they are checked once here, under the build's hold, before Arrow (or a C
    // consumer of an export) reads any value through them.
    private static unsafe void CheckOffsets(long* offsets, long length, long dataLength, string paramName)
    {
        long previous = offsets[0];
        if ((ulong)previous > (ulong)dataLength)
        {
            throw new ArgumentException($"The column's first offset is {previous:N0}, outside its data block of {dataLength:N0} bytes.", paramName);
        }

        for (long row = 0; row < length; row++)
        {
            long next = offsets[row + 1];
            if (next < previous || next > dataLength)
            {
                throw new ArgumentException($"Row {row:N0}'s offsets ({previous:N0} to {next:N0}) do not describe bytes inside the column's data block of {dataLength:N0} bytes; they were changed after the column was made.", paramName);
            }

            previous = next;
        }
    }

    // The end of the chunk from row start: as many rows as the buffers allow (and maxChunkRows), a
    // multiple of 8 unless it is the last, so that each chunk's bitmap starts on a byte. A column of no
    // rows is one empty chunk.
    private static unsafe long ChunkEnd(long* offsets, long start, long length, bool sharedOffsets, int offsetSize, long maxChunkRows, bool nullable, string paramName)
    {
        long end = Math.Min(length, start + Math.Min(maxChunkRows, MaxBufferBytes / offsetSize - 1));
        if (!sharedOffsets)
        {
            // The rows whose bytes fit one buffer from the chunk's first value: a binary search over the offsets.
            long low = start;
            long high = end;
            while (low < high)
            {
                long middle = low + ((high - low + 1) >> 1);
                if (offsets[middle] - offsets[start] <= MaxBufferBytes)
                {
                    low = middle;
                }
                else
                {
                    high = middle - 1;
                }
            }

            end = low;
        }

        if (end < length && nullable)
        {
            end = start + ((end - start) & ~7L);
        }

        if (end == start && start < length)
        {
            throw new ArgumentException($"The values from row {start:N0} take more than {MaxBufferBytes:N0} bytes within {(nullable ? 8 : 1)} row(s), more than one Arrow buffer holds.", paramName);
        }

        return end;
    }

    // 32-bit offsets, or 64-bit ones rebased to the chunk's first value, in a block the view owns.
    private static unsafe ArrowBuffer OwnOffsets(List<IDisposable> memories, long* offsets, int count, bool large, string paramName)
    {
        long first = offsets[0];
        if (large)
        {
            var block = new SafeArray<long>(count + 1);
            NativeBlockMemory<long> memory;
            try
            {
                using (MemoryLease<long> lease = block.Lease())
                {
                    long* target = (long*)lease.Pointer;
                    for (int i = 0; i <= count; i++)
                    {
                        target[i] = offsets[i] - first;
                    }
                }

                memory = NativeBlockMemory<long>.Owning(block, (count + 1) * sizeof(long));
            }
            catch
            {
                block.Dispose();
                throw;
            }

            memories.Add(memory);
            return new ArrowBuffer(memory.Memory);
        }

        if (offsets[count] - first > int.MaxValue)
        {
            throw new ArgumentException($"The chunk's values take {offsets[count] - first:N0} bytes, past what 32-bit offsets can address; export with 64-bit offsets.", paramName);
        }

        var small = new SafeArray<int>(count + 1);
        NativeBlockMemory<int> smallMemory;
        try
        {
            using (MemoryLease<int> lease = small.Lease())
            {
                int* target = (int*)lease.Pointer;
                for (int i = 0; i <= count; i++)
                {
                    target[i] = (int)(offsets[i] - first);
                }
            }

            smallMemory = NativeBlockMemory<int>.Owning(small, (count + 1) * sizeof(int));
        }
        catch
        {
            small.Dispose();
            throw;
        }

        memories.Add(smallMemory);
        return new ArrowBuffer(smallMemory.Memory);
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
}
