using System.Numerics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using jemalloc.Internal;

namespace jemalloc.Columns;

/// <summary>
/// The distinct values of a column being dictionary-encoded, each kept once in native blocks (offsets
/// and bytes, as a <see cref="NativeStringColumn"/> will hold them), found again by an open-addressing
/// hash table in native memory: no managed object per value. <see cref="GetOrAdd"/> gives a value's
/// index in the dictionary, adding it the first time it is seen.
/// </summary>
internal sealed class DictionaryTable : IDisposable
{
    /// <summary>The most distinct values a dictionary takes: its indices are 32-bit, and the table's slots (twice as many) must stay an array jemalloc can allocate.</summary>
    internal const int MaxEntries = 1 << 30;

    private const int InitialSlots = 1024;

    // Seeded once a process, so that values chosen to collide in one process do not in another.
    private static readonly ulong s_seed = BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(sizeof(ulong)));

    private readonly AllocationOptions? _options;
    private readonly NativeBufferWriter<long> _offsets;
    private readonly NativeBufferWriter<byte> _data;

    // A slot is 0 when empty, else the value's 32-bit hash in the high half and its index + 1 in the low half.
    private HugeArray<long> _slots;
    private long _mask;
    private int _count;
    private long _byteCount;

    internal DictionaryTable(AllocationOptions? options)
    {
        _options = options;
        NativeBufferWriter<long>? offsets = null;
        NativeBufferWriter<byte>? data = null;
        try
        {
            offsets = options is { } a ? new NativeBufferWriter<long>(256, a) : new NativeBufferWriter<long>(256);
            data = options is { } b ? new NativeBufferWriter<byte>(4096, b) : new NativeBufferWriter<byte>(4096);
            offsets.GetSpan(1)[0] = 0;
            offsets.Advance(1);
            _slots = NewSlots(InitialSlots);
        }
        catch
        {
            offsets?.Dispose();
            data?.Dispose();
            throw;
        }

        _offsets = offsets;
        _data = data;
        _mask = InitialSlots - 1;
    }

    /// <summary>The distinct values so far.</summary>
    internal int Count => _count;

    /// <summary>The index of <paramref name="value"/> in the dictionary, added if it is new.</summary>
    /// <exception cref="InvalidOperationException">The dictionary already holds <see cref="MaxEntries"/> values.</exception>
    /// <exception cref="OutOfMemoryException">A block cannot grow; the table is unchanged.</exception>
    internal int GetOrAdd(ReadOnlySpan<byte> value)
    {
        uint hash = Hash(value);
        long slot = hash & _mask;
        while (true)
        {
            long entry = _slots[slot];
            if (entry == 0)
            {
                break;
            }

            if ((uint)(entry >> 32) == hash)
            {
                int index = (int)(uint)entry - 1;
                if (Entry(index).SequenceEqual(value))
                {
                    return index;
                }
            }

            slot = (slot + 1) & _mask;
        }

        return Add(value, hash, slot);
    }

    /// <summary>Hands the distinct values over as a column of their own (the table is empty afterwards and is disposed by its owner).</summary>
    /// <exception cref="OutOfMemoryException">A block could not be shrunk.</exception>
    internal NativeStringColumn BuildDictionary(bool isUtf8)
    {
        if (_data.WrittenCount == 0)
        {
            // An array has at least one element; the offsets say none of it is a value.
            _data.GetSpan(1)[0] = 0;
            _data.Advance(1);
        }

        HugeArray<long>? offsets = null;
        HugeArray<byte>? data = null;
        try
        {
            offsets = _offsets.DetachToHugeArray();
            data = _data.DetachToHugeArray();
            return new NativeStringColumn(offsets, data, null, _count, isUtf8);
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
        _offsets.Dispose();
        _data.Dispose();
        _slots.Dispose();
    }

    /// <summary>A seeded 64-bit multiply-and-rotate hash of the bytes, eight at a time, folded to 32 bits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Hash(ReadOnlySpan<byte> value)
    {
        const ulong Prime = 0x9E3779B97F4A7C15UL;
        ulong h = s_seed ^ ((ulong)value.Length * Prime);
        ref byte start = ref System.Runtime.InteropServices.MemoryMarshal.GetReference(value);
        int i = 0;
        for (; i + 8 <= value.Length; i += 8)
        {
            h = BitOperations.RotateLeft((h ^ Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, i))) * Prime, 29);
        }

        if (i < value.Length)
        {
            ulong tail = 0;
            for (int shift = 0; i < value.Length; i++, shift += 8)
            {
                tail |= (ulong)Unsafe.Add(ref start, i) << shift;
            }

            h = BitOperations.RotateLeft((h ^ tail) * Prime, 29);
        }

        h ^= h >> 32;
        h *= Prime;
        return (uint)(h >> 32);
    }

    private HugeArray<long> NewSlots(long length) =>
        _options is { } options ? new HugeArray<long>(length, options) : new HugeArray<long>(length);

    private ReadOnlySpan<byte> Entry(int index)
    {
        ReadOnlySpan<long> ends = _offsets.GetWrittenSpan(index, 2);
        return _data.GetWrittenSpan(ends[0], (int)(ends[1] - ends[0]));
    }

    // Room is taken in every block before anything is written, so a failure to grow changes nothing.
    private int Add(ReadOnlySpan<byte> value, uint hash, long slot)
    {
        if (_count >= MaxEntries)
        {
            ThrowHelper.ThrowInvalidOperation($"The column has more than {MaxEntries:N0} distinct values, more than a dictionary of 32-bit indices holds here; read or keep it as a NativeStringColumn.");
        }

        // At most half full, so that a probe ends soon.
        if ((long)(_count + 1) * 2 > _mask + 1)
        {
            Grow();
            slot = hash & _mask;
            while (_slots[slot] != 0)
            {
                slot = (slot + 1) & _mask;
            }
        }

        Span<long> end = _offsets.GetSpan(1);
        if (!value.IsEmpty)
        {
            value.CopyTo(_data.GetSpan(value.Length));
            _data.Advance(value.Length);
        }

        _byteCount += value.Length;
        end[0] = _byteCount;
        _offsets.Advance(1);
        int index = _count++;
        _slots[slot] = ((long)hash << 32) | (uint)(index + 1);
        return index;
    }

    private void Grow()
    {
        long length = (_mask + 1) * 2;
        HugeArray<long> slots = NewSlots(length);
        long mask = length - 1;
        for (long old = 0; old <= _mask; old++)
        {
            long entry = _slots[old];
            if (entry != 0)
            {
                long slot = (uint)(entry >> 32) & mask;
                while (slots[slot] != 0)
                {
                    slot = (slot + 1) & mask;
                }

                slots[slot] = entry;
            }
        }

        _slots.Dispose();
        _slots = slots;
        _mask = mask;
    }
}
