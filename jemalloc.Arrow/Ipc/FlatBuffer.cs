using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A FlatBuffers buffer being read: every offset it follows and every scalar it reads is checked
/// against the buffer's length first, so a forged buffer gives <see cref="InvalidDataException"/>
/// naming the buffer and what was out of place, never a read outside it.
/// </summary>
internal readonly struct FlatBuffer
{
    private readonly byte[] _data;
    private readonly int _length;

    /// <summary>Reads the first <paramref name="length"/> bytes of <paramref name="data"/>; <paramref name="name"/> names the buffer in errors ("the footer").</summary>
    internal FlatBuffer(byte[] data, int length, string name)
    {
        _data = data;
        _length = length;
        Name = name;
    }

    /// <summary>What the buffer is, for messages.</summary>
    internal string Name { get; }

    /// <summary>The root table.</summary>
    /// <exception cref="InvalidDataException">The root offset or the table's vtable lies outside the buffer.</exception>
    internal FlatTable Root(string what) => TableAt(Deref(0, what), what);

    internal byte UInt8At(int position, string what)
    {
        Check(position, 1, what);
        return _data[position];
    }

    internal short Int16At(int position, string what)
    {
        Check(position, 2, what);
        return BinaryPrimitives.ReadInt16LittleEndian(_data.AsSpan(position));
    }

    internal ushort UInt16At(int position, string what)
    {
        Check(position, 2, what);
        return BinaryPrimitives.ReadUInt16LittleEndian(_data.AsSpan(position));
    }

    internal int Int32At(int position, string what)
    {
        Check(position, 4, what);
        return BinaryPrimitives.ReadInt32LittleEndian(_data.AsSpan(position));
    }

    internal long Int64At(int position, string what)
    {
        Check(position, 8, what);
        return BinaryPrimitives.ReadInt64LittleEndian(_data.AsSpan(position));
    }

    /// <summary>Follows the unsigned offset stored at <paramref name="position"/> to what it points at.</summary>
    internal int Deref(int position, string what)
    {
        uint offset = (uint)Int32At(position, what);
        long target = position + (long)offset;
        if (target >= _length)
        {
            Fail(what, $"points to byte {target:N0}");
        }

        return (int)target;
    }

    /// <summary>The table at <paramref name="position"/>, its vtable checked to lie inside the buffer.</summary>
    internal FlatTable TableAt(int position, string what)
    {
        long vtable = position - (long)Int32At(position, what);
        if (vtable < 0 || vtable > _length - 4)
        {
            Fail(what, $"has its vtable at byte {vtable:N0}");
        }

        int vtableSize = UInt16At((int)vtable, what);
        int tableSize = UInt16At((int)vtable + 2, what);
        if (vtableSize < 4 || (vtableSize & 1) != 0 || vtable + vtableSize > _length || tableSize < 4 || position + (long)tableSize > _length)
        {
            Fail(what, $"has a vtable of {vtableSize} bytes at byte {vtable:N0} for a table of {tableSize} bytes at byte {position:N0}");
        }

        return new FlatTable(this, position, (int)vtable, vtableSize, tableSize);
    }

    /// <summary>The vector whose offset is at <paramref name="position"/>: its first element's position and its count, checked to fit.</summary>
    internal FlatVector VectorAt(int position, int elementSize, string what)
    {
        int start = Deref(position, what);
        int count = Int32At(start, what);
        if (count < 0 || start + 4 + ((long)count * elementSize) > _length)
        {
            Fail(what, $"declares {(uint)count:N0} elements of {elementSize} bytes at byte {start:N0}");
        }

        return new FlatVector(this, start + 4, count, elementSize);
    }

    /// <summary>The UTF-8 string whose offset is at <paramref name="position"/>.</summary>
    internal string StringAt(int position, string what)
    {
        FlatVector bytes = VectorAt(position, 1, what);
        try
        {
            return System.Text.Encoding.UTF8.GetString(_data, bytes.Start, bytes.Count);
        }
        catch (ArgumentException e)
        {
            throw new InvalidDataException($"{Name} is malformed: {what} is not UTF-8.", e);
        }
    }

    private void Check(int position, int size, string what)
    {
        if (position < 0 || position > _length - size)
        {
            Fail(what, $"reads {size} bytes at byte {position:N0}");
        }
    }

    [DoesNotReturn]
    internal void Fail(string what, string detail) =>
        throw new InvalidDataException($"{Name} is malformed: {what} {detail}, outside its {_length:N0} bytes.");
}
