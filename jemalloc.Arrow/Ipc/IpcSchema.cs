namespace jemalloc.Arrow.Ipc;

/// <summary>
/// The Schema table of Schema.fbs, both ways: read into <see cref="ArrowIpcField"/>s with the layout
/// each top-level column takes in a record batch, and written from the writer's columns.
/// </summary>
internal static class IpcSchema
{
    // Schema: endianness (0), fields (1). Field: name (0), nullable (1), type_type (2), type (3),
    // dictionary (4), children (5). Union: mode (0).
    private const int MaxDepth = 64;
    private const int MaxNodes = 1 << 16;

    /// <summary>Reads the schema's fields and whether its data are big-endian.</summary>
    /// <exception cref="InvalidDataException">The schema is malformed, or nests deeper or wider than a reader should follow.</exception>
    internal static (ArrowIpcField[] Fields, bool BigEndian) Read(FlatTable schema)
    {
        short endianness = schema.GetInt16(0, 0, "the Schema's endianness");
        if (endianness is not (0 or 1))
        {
            IpcThrow.InvalidData($"The schema's endianness is {endianness}; Arrow knows 0 (little) and 1 (big).");
        }

        FlatVector vector = schema.GetVector(1, 4, "the Schema's fields");
        var fields = new ArrowIpcField[vector.Count];
        int budget = MaxNodes;
        for (int i = 0; i < fields.Length; i++)
        {
            string what = $"field {i} of the schema";
            FlatTable field = vector.TableAt(i, what);
            string name = field.GetString(0, what + "'s name") ?? string.Empty;
            bool nullable = field.GetBool(1, false, what + "'s nullability");
            byte code = field.GetUInt8(2, 0, what + "'s type tag");
            IpcType type = IpcType.Parse(code, field.GetTable(3, what + "'s type"), what + "'s type");
            bool dictionary = field.Has(4);
            IpcLayout layout = LayoutOf(field, code, dictionary, 0, ref budget, what);
            if (dictionary)
            {
                (long id, IpcType indexType) = ReadEncoding(field.GetTable(4, what + "'s dictionary encoding"), what);
                fields[i] = new ArrowIpcField(name, nullable, type, dictionary, layout, id, indexType);
            }
            else
            {
                fields[i] = new ArrowIpcField(name, nullable, type, dictionary, layout);
            }
        }

        return (fields, endianness == 1);
    }

    // DictionaryEncoding: id (0), indexType (1: an Int table; absent, a signed int32), isOrdered (2).
    // The format's indices are integers; a signed or unsigned one of any of its widths is read.
    private static (long Id, IpcType IndexType) ReadEncoding(FlatTable? encoding, string what)
    {
        if (encoding is not FlatTable table)
        {
            throw new InvalidDataException($"{char.ToUpperInvariant(what[0])}{what[1..]} is dictionary-encoded but has no encoding table.");
        }

        long id = table.GetInt64(0, 0, what + "'s dictionary id");
        FlatTable? indexTable = table.GetTable(1, what + "'s dictionary index type");
        IpcType indexType = indexTable is null ? IpcType.Of<int>() : IpcType.Parse(IpcTypeCode.Int, indexTable, what + "'s dictionary index type");
        return (id, indexType);
    }

    // The nodes and buffers a field takes in a batch, its children's included. A dictionary-encoded
    // field is its indices alone (the values travel in dictionary batches).
    private static IpcLayout LayoutOf(FlatTable field, byte code, bool dictionary, int depth, ref int budget, string what)
    {
        if (depth > MaxDepth || --budget < 0)
        {
            IpcThrow.InvalidData($"The schema nests its fields more than {MaxDepth} levels deep or has more than {MaxNodes:N0} of them ({what}).");
        }

        if (dictionary)
        {
            return new IpcLayout(1, 2, 0, true);
        }

        short unionMode = code == IpcTypeCode.Union ? field.GetTable(3, what + "'s type")?.GetInt16(0, 0, what + "'s union mode") ?? 0 : (short)0;
        int buffers = IpcTypeCode.BuffersOf(code, unionMode);
        if (buffers < 0)
        {
            return new IpcLayout(1, 0, 0, false);
        }

        var layout = new IpcLayout(1, buffers, code is IpcTypeCode.BinaryView or IpcTypeCode.Utf8View ? 1 : 0, true);
        FlatVector children = field.GetVector(5, 4, what + "'s children");
        for (int c = 0; c < children.Count; c++)
        {
            string childWhat = $"child {c} of {what}";
            FlatTable child = children.TableAt(c, childWhat);
            IpcLayout inner = LayoutOf(child, child.GetUInt8(2, 0, childWhat + "'s type tag"), child.Has(4), depth + 1, ref budget, childWhat);
            layout = new IpcLayout(layout.Nodes + inner.Nodes, layout.Buffers + inner.Buffers, layout.Views + inner.Views, layout.Known && inner.Known);
        }

        return layout;
    }

    /// <summary>The Schema table for the writer's columns: little-endian unless <paramref name="bigEndian"/> (a test's).</summary>
    internal static FlatObject Write(IReadOnlyList<(string Name, IpcType Type, bool Nullable)> columns, bool bigEndian)
    {
        var fields = new List<FlatObject>(columns.Count);
        foreach ((string name, IpcType type, bool nullable) in columns)
        {
            fields.Add(FlatObject.Table()
                .Reference(0, FlatObject.String(name))
                .Scalar(1, 1, nullable ? 1 : 0)
                .Scalar(2, 1, type.Code)
                .Reference(3, type.ToFlat())
                .Reference(5, FlatObject.Tables([])));
        }

        return FlatObject.Table()
            .Scalar(0, 2, bigEndian ? 1 : 0)
            .Reference(1, FlatObject.Tables(fields));
    }
}
