using jemalloc.AddOns;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A column the IPC writer writes: its name, Arrow type, rows and optional validity bitmap, held
/// for the whole write, and its buffers for a range of rows written from native memory.
/// </summary>
internal abstract unsafe class IpcWriterColumn(string name, IpcType type, long length, NativeBuffer<byte>? validity)
{
    internal string Name { get; } = name;

    internal IpcType Type { get; } = type;

    internal long Length { get; } = length;

    internal bool Nullable => validity is not null;

    /// <summary>The validity bitmap, or null when every row is valid.</summary>
    internal NativeBuffer<byte>? Validity => validity;

    /// <summary>Holds the column's blocks for the write (the holds go into <paramref name="holds"/>, which the writer disposes).</summary>
    internal virtual void Hold(List<MemoryHold> holds)
    {
        if (validity is not null)
        {
            holds.Add(validity.Hold());
        }
    }

    /// <summary>The nulls among rows <paramref name="start"/> (a multiple of 8) to <paramref name="start"/> + <paramref name="count"/> - 1.</summary>
    internal long NullsIn(long start, long count)
    {
        if (validity is null)
        {
            return 0;
        }

        using MemoryLease<byte> lease = validity.Lease();
        return count - ValidityBitmap.CountSet((byte*)lease.Pointer + (start >> 3), count);
    }

    /// <summary>Writes the validity bitmap of rows from <paramref name="start"/> (a multiple of 8), <paramref name="bytes"/> bytes of it.</summary>
    internal void WriteValidity(IpcOutput output, long start, long bytes)
    {
        using MemoryLease<byte> lease = validity!.Lease();
        output.WriteNative((byte*)lease.Pointer + (start >> 3), bytes);
    }

    /// <summary>How many buffers follow the validity bitmap: 1 for values, 2 for strings (offsets and data).</summary>
    internal virtual int ValueBuffers => 1;

    /// <summary>Checks, before anything is written, that batches of <paramref name="batchSize"/> rows can be written and the values are valid for the column's type.</summary>
    /// <exception cref="InvalidOperationException">They cannot.</exception>
    internal virtual void CheckBatches(long batchSize)
    {
    }

    /// <summary>The bytes each value buffer of rows <paramref name="start"/> to <paramref name="start"/> + <paramref name="count"/> - 1 takes, before padding.</summary>
    internal abstract void ValueBufferLengths(long start, long count, Span<long> lengths);

    /// <summary>Writes the value buffers of those rows, each padded to 8 bytes, through <paramref name="scratch"/> where they must be packed, rebased or swapped.</summary>
    internal abstract void WriteValues(IpcOutput output, long start, long count, byte* scratch, int scratchBytes, bool bigEndian);
}
