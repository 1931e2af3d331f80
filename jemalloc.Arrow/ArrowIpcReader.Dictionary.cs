using System.Numerics;
using jemalloc.AddOns;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow;

/// <summary>The read of dictionary-encoded string and binary columns into a <see cref="NativeDictionaryColumn"/>.</summary>
public sealed partial class ArrowIpcReader
{
    /// <summary>Reads a dictionary-encoded Utf8, Binary, LargeUtf8 or LargeBinary column, nulls included, with the library's default options.</summary>
    /// <inheritdoc cref="ReadDictionaryColumn(string, AllocationOptions)"/>
    public NativeDictionaryColumn ReadDictionaryColumn(string column) => ReadDictionaryColumn(column, AllocationOptions.Default);

    /// <summary>
    /// Reads a dictionary-encoded Utf8, Binary, LargeUtf8 or LargeBinary column into a new
    /// <see cref="NativeDictionaryColumn"/>, still encoded: its dictionary (the dictionary batches of
    /// its id, the first and the deltas appended to it) into a <see cref="NativeStringColumn"/>, and
    /// the indices of every record batch (of any integer type the schema gives, swapped when the
    /// input is big-endian) into 32-bit indices, each checked to name a value its batch's dictionary
    /// held by then; its validity bitmaps, when it has nulls, into a bitmap. A row whose index names a
    /// null value of the dictionary is a null row (as Arrow reads it); the dictionary's null values
    /// are kept as whatever bytes their offsets give (usually none), which no row that is not null
    /// names. All are allocated with <paramref name="options"/>.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the blocks (and the reader's small scratch block) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (an input without rows gives a column of none), which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name or more than one; the column is not dictionary-encoded but of a type another read takes (the message names it); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary); its dictionary holds more values than 32-bit indices name, or is replaced (not appended to) by a later dictionary batch; a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The input has rows but no dictionary batch of the column's dictionary id, or a record batch before it; a row that is not null has an index outside its dictionary; or a batch's node or buffers do not fit the batch or its body, or the input is shorter than its metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NativeDictionaryColumn ReadDictionaryColumn(string column, AllocationOptions options) =>
        ReadGuarded(column, index => ReadDictionaryEntered(index, column, options));

    private unsafe NativeDictionaryColumn ReadDictionaryEntered(int index, string column, AllocationOptions options)
    {
        ArrowIpcField field = _index.Fields[index];
        if (!field.IsDictionaryEncoded || !field.IpcType.IsVariableBinary)
        {
            ThrowWrongRead(field, column, "ReadDictionaryColumn");
        }

        (IpcIndex dictionary, long[] available) = DictionaryOf(field, column);
        IpcType indexType = field.IndexType!.Value;
        var read = new IpcColumnRead(_stream, _index, index);
        (long rows, long nulls) = read.Check(valueBuffers: 1, elementBits: indexType.BitWidth);
        HugeArray<long>? offsets = null;
        HugeArray<byte>? data = null;
        HugeArray<byte>? valueValidity = null;
        HugeArray<int>? indices = null;
        HugeArray<byte>? validity = null;
        try
        {
            (offsets, data, valueValidity, long count) = ReadStringParts(dictionary, 0, options);
            if (count > int.MaxValue)
            {
                IpcThrow.NotSupported($"Column '{column}''s dictionary (id {field.DictionaryId}) holds {count:N0} values, more than 32-bit indices name.");
            }

            using var scratch = new SafeArray<byte>(ScratchBytes, options with { HugePages = false });
            using MemoryLease<byte> scratchLease = scratch.Lease();
            byte* scratchPointer = (byte*)scratchLease.Pointer;

            // A row is null when its index is, or when the value it names is (Arrow's logical null), so a
            // dictionary with null values gives the rows a bitmap even when no index is null.
            if (nulls > 0 || valueValidity is not null)
            {
                validity = new HugeArray<byte>(Math.Max(1, ValidityBitmap.BytesFor(rows)), options);
                using MemoryLease<byte> bitsLease = validity.Lease();
                if (nulls > 0)
                {
                    read.ReadValidity((byte*)bitsLease.Pointer, scratchPointer);
                }
                else
                {
                    ValidityBitmap.SetRange((byte*)bitsLease.Pointer, 0, rows);
                }
            }

            indices = new HugeArray<int>(Math.Max(1, rows), options);
            var target = new IndexTarget(indices, validity, valueValidity, available, column);
            switch (indexType.Kind)
            {
                case ArrowIpcType.Int8: ReadIndices<sbyte>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.UInt8: ReadIndices<byte>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.Int16: ReadIndices<short>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.UInt16: ReadIndices<ushort>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.Int32: ReadIndices<int>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.UInt32: ReadIndices<uint>(read, rows, target, options, scratchPointer); break;
                case ArrowIpcType.Int64: ReadIndices<long>(read, rows, target, options, scratchPointer); break;
                default: ReadIndices<ulong>(read, rows, target, options, scratchPointer); break;
            }

            // The dictionary's null values stay as whatever bytes their offsets give; no valid row names them.
            valueValidity?.Dispose();
            valueValidity = null;
            var values = new NativeStringColumn(offsets, data, null, count, isUtf8: field.Type is ArrowIpcType.Utf8 or ArrowIpcType.LargeUtf8);
            offsets = null;
            data = null;
            try
            {
                return new NativeDictionaryColumn(indices, validity, values, rows);
            }
            catch
            {
                values.Dispose();
                throw;
            }
        }
        catch
        {
            offsets?.Dispose();
            data?.Dispose();
            valueValidity?.Dispose();
            indices?.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    // The dictionary batches of the field's id as an index of their own, and how many values the
    // dictionary holds when each record batch comes (deltas may follow record batches in a stream).
    private (IpcIndex Dictionary, long[] Available) DictionaryOf(ArrowIpcField field, string column)
    {
        long id = field.DictionaryId;
        List<IpcDictionaryBatch> batches = _index.Dictionaries.Where(d => d.Id == id).ToList();
        if (batches.Count == 0 && _index.RowCount > 0)
        {
            IpcThrow.InvalidData($"Column '{column}' is dictionary-encoded with dictionary id {id}, but the input has no dictionary batch of that id.");
        }

        if (batches.Count > 0 && batches[0].RecordBatchesBefore > 0)
        {
            IpcThrow.InvalidData($"Column '{column}''s dictionary (id {id}) comes after record batch {batches[0].RecordBatchesBefore - 1}, which needs it.");
        }

        for (int i = 1; i < batches.Count; i++)
        {
            if (!batches[i].IsDelta)
            {
                IpcThrow.NotSupported($"Column '{column}''s dictionary (id {id}) is replaced by a later dictionary batch; the reader reads a dictionary given once, with deltas appended to it.");
            }
        }

        var field0 = new ArrowIpcField($"{column} (dictionary {id})", true, field.IpcType, false, new IpcLayout(1, 3, 0, true));
        IpcIndex dictionary = _index.OfDictionary(field0, batches.Select(d => d.Batch));
        // One pass over both lists (they are in the input's order), so that many batches of each cost
        // their sum, not their product.
        long[] available = new long[_index.Batches.Count];
        long held = 0;
        int next = 0;
        for (int b = 0; b < available.Length; b++)
        {
            for (; next < batches.Count && batches[next].RecordBatchesBefore <= b; next++)
            {
                // A malformed length is caught when the dictionary is read; saturate until then.
                held = batches[next].Batch.Length > long.MaxValue - held ? long.MaxValue : held + batches[next].Batch.Length;
            }

            available[b] = held;
        }

        return (dictionary, available);
    }

    // The indices of every record batch, read as the schema's integer type (and swapped) into a
    // scratch array, then narrowed to 32 bits: each row that is not null must name a value its batch's
    // dictionary holds; a null row's index, which Arrow lets be anything, becomes 0; a row naming a
    // null value of the dictionary is marked null.
    private static unsafe void ReadIndices<T>(in IpcColumnRead read, long rows, IndexTarget target, AllocationOptions options, byte* scratch)
        where T : unmanaged, IEquatable<T>, IBinaryInteger<T>
    {
        using var raw = new HugeArray<T>(Math.Max(1, rows), options with { HugePages = false });
        using MemoryLease<T> rawLease = raw.Lease();
        using MemoryLease<int> indexLease = target.Indices.Lease();
        using MemoryLease<byte> bitsLease = target.Validity is null ? default : target.Validity.Lease();
        using MemoryLease<byte> valueBitsLease = target.ValueValidity is null ? default : target.ValueValidity.Lease();
        var from = (T*)rawLease.Pointer;
        var to = (int*)indexLease.Pointer;
        byte* bits = target.Validity is null ? null : (byte*)bitsLease.Pointer;
        byte* valueBits = target.ValueValidity is null ? null : (byte*)valueBitsLease.Pointer;
        read.ReadValues(from, scratch);
        long row = 0;
        for (int b = 0; b < read.Batches.Count; b++)
        {
            long end = row + read.Batches[b].Length;
            long available = target.Available[b];
            for (; row < end; row++)
            {
                long value = long.CreateSaturating(from[row]);
                if (bits != null && (bits[row >> 3] & (1 << (int)(row & 7))) == 0)
                {
                    to[row] = 0;
                }
                else if ((ulong)value < (ulong)available)
                {
                    to[row] = (int)value;
                    if (valueBits != null && (valueBits[value >> 3] & (1 << (int)(value & 7))) == 0)
                    {
                        bits[row >> 3] &= (byte)~(1 << (int)(row & 7));
                    }
                }
                else
                {
                    IpcThrow.InvalidData($"Row {row:N0} of column '{target.Column}' (record batch {b}) has index {from[row]}, outside its dictionary of {available:N0} values.");
                }
            }
        }
    }

    // Where ReadIndices writes, and what it checks the indices against.
    private readonly record struct IndexTarget(HugeArray<int> Indices, HugeArray<byte>? Validity, HugeArray<byte>? ValueValidity, long[] Available, string Column);
}
