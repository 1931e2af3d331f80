using System.Buffers.Binary;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// Lays out a tree of <see cref="FlatObject"/>s as a FlatBuffer, front to back: an object comes
/// before the objects it points to, so every offset points forward as the format requires, and each
/// table's vtable sits just before it. Scalars are aligned to their size and vectors of structs to
/// their alignment, counted from the buffer's start (which IPC places on an 8-byte boundary).
/// </summary>
internal sealed class FlatBufferBuilder
{
    private byte[] _buffer = new byte[512];
    private int _length;

    /// <summary>The buffer for <paramref name="root"/>, padded with zeros to a multiple of 8 bytes.</summary>
    internal static byte[] Build(FlatObject root)
    {
        var builder = new FlatBufferBuilder();
        builder.Reserve(4);
        builder.WriteChildAt(0, root);
        builder.AlignTo(8);
        return builder._buffer.AsSpan(0, builder._length).ToArray();
    }

    // Writes the child after everything so far and points the offset at patchAt to it.
    private void WriteChildAt(int patchAt, FlatObject child)
    {
        int position = Write(child);
        BinaryPrimitives.WriteUInt32LittleEndian(_buffer.AsSpan(patchAt), (uint)(position - patchAt));
    }

    private int Write(FlatObject value) => value.Kind switch
    {
        FlatObject.FlatKind.Table => WriteTable(value),
        FlatObject.FlatKind.TableVector => WriteTableVector(value),
        _ => WriteBytes(value),
    };

    private int WriteTable(FlatObject table)
    {
        // Widest fields first, so each lands aligned after the 4-byte vtable offset with little padding.
        FlatObject.FlatField[] fields = [.. table.Fields.OrderByDescending(f => f.Size)];
        int slots = fields.Length == 0 ? 0 : fields.Max(f => f.Slot) + 1;
        var offsets = new int[fields.Length];
        int size = 4;
        for (int i = 0; i < fields.Length; i++)
        {
            size = Align(size, fields[i].Size);
            offsets[i] = size;
            size += fields[i].Size;
        }

        // The vtable, then the table on an 8-byte boundary (its soffset counts back to the vtable).
        int vtableSize = 4 + (2 * slots);
        AlignTo(2);
        int vtable = Reserve(vtableSize);
        AlignTo(8);

        int start = Reserve(size);
        BinaryPrimitives.WriteUInt16LittleEndian(_buffer.AsSpan(vtable), (ushort)vtableSize);
        BinaryPrimitives.WriteUInt16LittleEndian(_buffer.AsSpan(vtable + 2), (ushort)size);
        BinaryPrimitives.WriteInt32LittleEndian(_buffer.AsSpan(start), start - vtable);
        for (int i = 0; i < fields.Length; i++)
        {
            BinaryPrimitives.WriteUInt16LittleEndian(_buffer.AsSpan(vtable + 4 + (2 * fields[i].Slot)), (ushort)offsets[i]);
            Span<byte> field = _buffer.AsSpan(start + offsets[i], fields[i].Size);
            switch (fields[i].Size)
            {
                case 1: field[0] = (byte)fields[i].Value; break;
                case 2: BinaryPrimitives.WriteInt16LittleEndian(field, (short)fields[i].Value); break;
                case 4: BinaryPrimitives.WriteInt32LittleEndian(field, (int)fields[i].Value); break;
                default: BinaryPrimitives.WriteInt64LittleEndian(field, fields[i].Value); break;
            }
        }

        for (int i = 0; i < fields.Length; i++)
        {
            if (fields[i].Child is FlatObject child)
            {
                WriteChildAt(start + offsets[i], child);
            }
        }

        return start;
    }

    private int WriteTableVector(FlatObject vector)
    {
        AlignTo(4);
        int start = Reserve(4 + (4 * vector.Elements.Count));
        BinaryPrimitives.WriteInt32LittleEndian(_buffer.AsSpan(start), vector.Elements.Count);
        for (int i = 0; i < vector.Elements.Count; i++)
        {
            WriteChildAt(start + 4 + (4 * i), vector.Elements[i]);
        }

        return start;
    }

    // A string or a vector of structs or scalars: its count, then its bytes aligned to the elements'
    // alignment (a string ends with a zero byte the count leaves out).
    private int WriteBytes(FlatObject vector)
    {
        int alignment = Math.Max(4, vector.Alignment);
        while (((_length + 4) % alignment) != 0)
        {
            Reserve(1);
        }

        bool isString = vector.Kind == FlatObject.FlatKind.String;
        int start = Reserve(4 + vector.Bytes.Length + (isString ? 1 : 0));
        BinaryPrimitives.WriteInt32LittleEndian(_buffer.AsSpan(start), vector.Count);
        vector.Bytes.CopyTo(_buffer.AsSpan(start + 4));
        return start;
    }

    private static int Align(int value, int alignment) => (value + alignment - 1) & -alignment;

    private void AlignTo(int alignment)
    {
        int aligned = Align(_length, alignment);
        Reserve(aligned - _length);
    }

    // Appends count zero bytes and returns where they start.
    private int Reserve(int count)
    {
        if (_length + count > _buffer.Length)
        {
            Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, _length + count));
        }

        int start = _length;
        _length += count;
        return start;
    }
}
