namespace jemalloc.Arrow.Ipc;

/// <summary>
/// An object to be written into a FlatBuffer by <see cref="FlatBufferBuilder"/>: a table (scalar fields
/// and offsets to other objects), a vector of tables, a vector of structs or scalars, or a string.
/// Metadata is small (a schema, one batch's buffer list), so the objects are plain managed ones.
/// </summary>
internal sealed class FlatObject
{
    private FlatObject(FlatKind kind) => Kind = kind;

    internal enum FlatKind
    {
        Table,
        TableVector,
        ByteVector,
        String,
    }

    internal FlatKind Kind { get; }

    /// <summary>A table's fields, by slot.</summary>
    internal List<FlatField> Fields { get; } = [];

    /// <summary>A vector of tables' elements.</summary>
    internal List<FlatObject> Elements { get; } = [];

    /// <summary>A string's UTF-8 bytes, or a vector's elements laid out (structs or scalars, little-endian).</summary>
    internal byte[] Bytes { get; private init; } = [];

    /// <summary>A vector's element count (of <see cref="Bytes"/>).</summary>
    internal int Count { get; private init; }

    /// <summary>The alignment a vector's elements need.</summary>
    internal int Alignment { get; private init; } = 4;

    internal static FlatObject Table() => new(FlatKind.Table);

    internal static FlatObject Tables(IEnumerable<FlatObject> elements)
    {
        var vector = new FlatObject(FlatKind.TableVector);
        vector.Elements.AddRange(elements);
        return vector;
    }

    internal static FlatObject Structs(byte[] bytes, int count, int alignment) =>
        new(FlatKind.ByteVector) { Bytes = bytes, Count = count, Alignment = alignment };

    internal static FlatObject String(string value)
    {
        byte[] bytes = System.Text.Encoding.UTF8.GetBytes(value);
        return new(FlatKind.String) { Bytes = bytes, Count = bytes.Length };
    }

    /// <summary>Adds a scalar field of <paramref name="size"/> bytes (1, 2, 4 or 8) holding <paramref name="value"/>.</summary>
    internal FlatObject Scalar(int slot, int size, long value)
    {
        Fields.Add(new FlatField(slot, size, value, null));
        return this;
    }

    /// <summary>Adds a field holding the offset of <paramref name="child"/>.</summary>
    internal FlatObject Reference(int slot, FlatObject child)
    {
        Fields.Add(new FlatField(slot, 4, 0, child));
        return this;
    }

    /// <summary>One field of a table: a scalar of <paramref name="Size"/> bytes, or an offset to <paramref name="Child"/>.</summary>
    internal readonly record struct FlatField(int Slot, int Size, long Value, FlatObject? Child);
}
