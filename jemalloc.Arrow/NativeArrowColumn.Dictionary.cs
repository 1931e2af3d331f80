using Apache.Arrow;
using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

// A NativeDictionaryColumn as Arrow dictionary arrays: int32 indices that are the column's own block (no
// copy) with its validity bitmap, and one dictionary shared by every chunk, shown as a string column is
// (its data block as it is, its offsets copied and checked). The indices are checked once, as the view
// is made: every row that is not null names a value of the dictionary.
public sealed partial class NativeArrowColumn
{
    internal static unsafe NativeArrowColumn CreateDictionary(NativeDictionaryColumn column, bool largeOffsets, int maxChunkRows, string paramName)
    {
        var memories = new List<IDisposable>();
        var arrays = new List<IArrowArray>();
        var addresses = new List<nint>();
        try
        {
            NativeArrowColumn values = CreateStrings(column.Dictionary, largeOffsets, long.MaxValue, paramName);
            memories.AddRange(values._memories);
            if (values.ChunkCount != 1)
            {
                throw new ArgumentException($"The dictionary's {column.Dictionary.Length:N0} values take {column.Dictionary.ByteCount:N0} bytes, more than one Arrow buffer{(largeOffsets ? string.Empty : " (or 32-bit offsets)")} holds; an Arrow dictionary is one array.", paramName);
            }

            ArrayData dictionary = values.Chunks.ArrowArray(0).Data;
            var type = new DictionaryType(Int32Type.Default, dictionary.DataType, false);
            CheckIndices(column, paramName);
            long start = 0;
            do
            {
                int count = (int)Math.Min(maxChunkRows, column.Length - start);
                var indexMemory = NativeBlockMemory<int>.View(column.Indices, start * sizeof(int), count * sizeof(int));
                memories.Add(indexMemory);
                addresses.Add(indexMemory.Address);
                (ArrowBuffer validityBuffer, int nullCount) = ChunkValidity(column.Validity, start, count, memories);
                var data = new ArrayData(type, count, nullCount, 0, [validityBuffer, new ArrowBuffer(indexMemory.Memory)], null, dictionary);
                arrays.Add(ArrowArrayFactory.BuildArray(data));
                start += count;
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

    // Every row that is not null must name a dictionary value; a null row's index is not read by Arrow's readers.
    private static unsafe void CheckIndices(NativeDictionaryColumn column, string paramName)
    {
        using MemoryLease<int> indexLease = column.Indices.Lease();
        using MemoryLease<byte> validityLease = column.Validity is null ? default : column.Validity.Lease();
        int* indices = (int*)indexLease.Pointer;
        byte* bits = column.Validity is null ? null : (byte*)validityLease.Pointer;
        uint limit = (uint)column.Dictionary.Length;
        for (long row = 0; row < column.Length; row++)
        {
            if ((uint)indices[row] >= limit && (bits == null || ValidityBitmap.IsSet(bits, row)))
            {
                throw new ArgumentException($"Row {row:N0}'s index is {indices[row]:N0}; the dictionary has {limit:N0} values (the column's indices were changed after it was made).", paramName);
            }
        }
    }
}
