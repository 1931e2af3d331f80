namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A table of a <see cref="FlatBuffer"/>: its fields are found through its vtable (slot <c>n</c> at
/// vtable entry <c>n</c>); a field the vtable leaves out has its schema's default. Each field read is
/// checked to lie inside the table and the buffer.
/// </summary>
internal readonly struct FlatTable
{
    private readonly FlatBuffer _buffer;
    private readonly int _position;
    private readonly int _vtable;
    private readonly int _vtableSize;
    private readonly int _tableSize;

    internal FlatTable(FlatBuffer buffer, int position, int vtable, int vtableSize, int tableSize)
    {
        _buffer = buffer;
        _position = position;
        _vtable = vtable;
        _vtableSize = vtableSize;
        _tableSize = tableSize;
    }

    internal FlatBuffer Buffer => _buffer;

    /// <summary>Whether the field in <paramref name="slot"/> is present.</summary>
    internal bool Has(int slot) => FieldPosition(slot, 0, "a field") != 0;

    internal byte GetUInt8(int slot, byte defaultValue, string what)
    {
        int position = FieldPosition(slot, 1, what);
        return position == 0 ? defaultValue : _buffer.UInt8At(position, what);
    }

    internal bool GetBool(int slot, bool defaultValue, string what) => GetUInt8(slot, defaultValue ? (byte)1 : (byte)0, what) != 0;

    internal short GetInt16(int slot, short defaultValue, string what)
    {
        int position = FieldPosition(slot, 2, what);
        return position == 0 ? defaultValue : _buffer.Int16At(position, what);
    }

    internal int GetInt32(int slot, int defaultValue, string what)
    {
        int position = FieldPosition(slot, 4, what);
        return position == 0 ? defaultValue : _buffer.Int32At(position, what);
    }

    internal long GetInt64(int slot, long defaultValue, string what)
    {
        int position = FieldPosition(slot, 8, what);
        return position == 0 ? defaultValue : _buffer.Int64At(position, what);
    }

    /// <summary>The sub-table in <paramref name="slot"/>, or <see langword="null"/> when it is absent.</summary>
    internal FlatTable? GetTable(int slot, string what)
    {
        int position = FieldPosition(slot, 4, what);
        return position == 0 ? null : _buffer.TableAt(_buffer.Deref(position, what), what);
    }

    /// <summary>The string in <paramref name="slot"/>, or <see langword="null"/> when it is absent.</summary>
    internal string? GetString(int slot, string what)
    {
        int position = FieldPosition(slot, 4, what);
        return position == 0 ? null : _buffer.StringAt(position, what);
    }

    /// <summary>The vector in <paramref name="slot"/> (empty when absent), its elements <paramref name="elementSize"/> bytes each (4 for tables and strings).</summary>
    internal FlatVector GetVector(int slot, int elementSize, string what)
    {
        int position = FieldPosition(slot, 4, what);
        return position == 0 ? new FlatVector(_buffer, 0, 0, elementSize) : _buffer.VectorAt(position, elementSize, what);
    }

    // The field's position in the buffer, or 0 when the vtable leaves it out; a field reaching past
    // the table's declared size is malformed.
    private int FieldPosition(int slot, int size, string what)
    {
        int entry = 4 + (2 * slot);
        if (entry + 2 > _vtableSize)
        {
            return 0;
        }

        int offset = _buffer.UInt16At(_vtable + entry, what);
        if (offset == 0)
        {
            return 0;
        }

        if (offset < 4 || offset + size > _tableSize)
        {
            _buffer.Fail(what, $"lies at offset {offset} of a table of {_tableSize} bytes at byte {_position:N0}");
        }

        return _position + offset;
    }
}
