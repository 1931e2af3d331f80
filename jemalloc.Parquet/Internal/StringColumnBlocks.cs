using jemalloc.AddOns;
using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// The blocks of a string column being read: offsets and bytes in growing writers (their memory is not
/// cleared: every element handed over is written), and the validity bitmap, allocated for every row up
/// front since the row count is known. <see cref="Build"/> hands them to a
/// <see cref="NativeStringColumn"/> without a copy; <see cref="Dispose"/> frees what was not handed over.
/// </summary>
internal sealed unsafe class StringColumnBlocks : IByteArraySink, IDisposable
{
    // Values copied per GetSpan of the data writer at most: a batch's bytes in one span while they fit.
    private const int MaxSpanBytes = 1 << 30;

    private readonly NativeBufferWriter<long> _offsets;
    private readonly NativeBufferWriter<byte> _data;
    private HugeArray<byte>? _validity;
    private long _bytes;
    private long _nullCount;
    private long _rows;

    internal StringColumnBlocks(long rows, long estimatedBytes, bool nullable, AllocationOptions? options)
    {
        try
        {
            _offsets = Writer<long>(rows + 1, options);
            // The footer's estimate, bounded by the caller: a block of the right size up front spares the
            // growths, each of which copies the bytes so far and briefly holds both blocks.
            _data = Writer<byte>(Math.Max(estimatedBytes, 1), options);
            if (nullable)
            {
                _validity = options is { } chosen ? new HugeArray<byte>(Math.Max(1, ValidityBitmap.BytesFor(rows)), chosen) : new HugeArray<byte>(Math.Max(1, ValidityBitmap.BytesFor(rows)));
            }

            _offsets.GetSpan(1)[0] = 0;
            _offsets.Advance(1);
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    /// <summary>
    /// Appends a batch of <paramref name="count"/> rows: <paramref name="valueCount"/> values (nulls left
    /// out) and, for an optional column, their definition levels.
    /// </summary>
    /// <exception cref="InvalidDataException">The levels and values disagree.</exception>
    public void Append(ByteArray* values, int valueCount, short* levels, short maxDefinition, int count, string where, long firstRow)
    {
        // The reader's loop has checked that valueCount is exactly the rows whose level is maxDefinition.
        CopyBytes(values, valueCount, where, firstRow);
        Span<long> offsets = _offsets.GetSpan(count);
        long end = _bytes;
        if (levels is null || valueCount == count)
        {
            for (int i = 0; i < count; i++)
            {
                end += values[i].Length;
                offsets[i] = end;
            }

            if (_validity is not null)
            {
                using MemoryLease<byte> bits = _validity.Lease();
                ValidityBitmap.SetRange((byte*)bits.Pointer, _rows, count);
            }
        }
        else
        {
            using MemoryLease<byte> bits = _validity!.Lease();
            byte* bitmap = (byte*)bits.Pointer;
            int next = 0;
            for (int i = 0; i < count; i++)
            {
                if (levels[i] == maxDefinition)
                {
                    end += values[next++].Length;
                    ValidityBitmap.Set(bitmap, _rows + i);
                }
                else
                {
                    _nullCount++;
                }

                offsets[i] = end;
            }
        }

        _offsets.Advance(count);
        _rows += count;
        _bytes = end;
    }

    /// <summary>Hands the blocks to a new column; this object then owns nothing.</summary>
    internal NativeStringColumn Build(bool isUtf8)
    {
        if (_bytes == 0)
        {
            // An array has at least one element; the offsets say none of it is a value.
            _data.GetSpan(1)[0] = 0;
            _data.Advance(1);
        }

        HugeArray<long>? offsets = null;
        HugeArray<byte>? data = null;
        HugeArray<byte>? validity = _nullCount > 0 ? _validity : null;
        try
        {
            offsets = _offsets.DetachToHugeArray();
            data = _data.DetachToHugeArray();
            var column = new NativeStringColumn(offsets, data, validity, _rows, isUtf8);
            if (validity is null)
            {
                _validity?.Dispose();
            }

            _validity = null;
            return column;
        }
        catch
        {
            offsets?.Dispose();
            data?.Dispose();
            throw;
        }
    }

    public void Dispose()
    {
        _offsets?.Dispose();
        _data?.Dispose();
        _validity?.Dispose();
        _validity = null;
    }

    private static NativeBufferWriter<T> Writer<T>(long capacity, AllocationOptions? options)
        where T : unmanaged =>
        options is { } chosen ? new NativeBufferWriter<T>(capacity, chosen) : new NativeBufferWriter<T>(capacity);

    // The batch's bytes into the data block, in as few spans as their size allows.
    private void CopyBytes(ByteArray* values, int count, string where, long firstRow)
    {
        for (int k = 0; k < count; k++)
        {
            if (values[k].Length < 0)
            {
                ParquetThrow.InvalidData($"The {where} gave a value of {values[k].Length:N0} bytes in the batch from row {firstRow:N0}.");
            }
        }

        int i = 0;
        while (i < count)
        {
            long want = 0;
            int end = i;
            for (; end < count && want + values[end].Length <= MaxSpanBytes; end++)
            {
                want += values[end].Length;
            }

            if (end == i)
            {
                // One value alone is more than MaxSpanBytes (a ByteArray's length is an int, so it fits in one span).
                want = values[i].Length;
                end = i + 1;
            }

            if (want > 0)
            {
                Span<byte> destination = _data.GetSpan((int)want);
                int at = 0;
                for (int k = i; k < end; k++)
                {
                    int length = values[k].Length;
                    new ReadOnlySpan<byte>((void*)values[k].Pointer, length).CopyTo(destination.Slice(at));
                    at += length;
                }

                _data.Advance(at);
            }

            i = end;
        }
    }
}
