using Apache.Arrow.Types;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow;

/// <summary>One column of an Arrow IPC schema: its name, type and whether it may hold nulls.</summary>
public sealed class ArrowIpcField
{
    internal ArrowIpcField(string name, bool isNullable, IpcType type, bool isDictionaryEncoded, IpcLayout layout, long dictionaryId = 0, IpcType? indexType = null)
    {
        Name = name;
        IsNullable = isNullable;
        IpcType = type;
        IsDictionaryEncoded = isDictionaryEncoded;
        Layout = layout;
        DictionaryId = dictionaryId;
        IndexType = indexType;
    }

    /// <summary>The column's name.</summary>
    public string Name { get; }

    /// <summary>Whether the schema lets the column hold nulls.</summary>
    public bool IsNullable { get; }

    /// <summary>The column's type; <see cref="ArrowIpcType.Other"/> for a type the reader does not read (see <see cref="TypeName"/>). For a dictionary-encoded column, the type of its dictionary's values.</summary>
    public ArrowIpcType Type => IpcType.Kind;

    /// <summary>The type as Arrow names it, with its parameters: <c>Int64</c>, <c>Timestamp(Microsecond, UTC)</c>, <c>Decimal(10, 2, 128)</c>, <c>Struct</c>.</summary>
    public string TypeName => IpcType.Name;

    /// <summary>The unit of a <see cref="ArrowIpcType.Timestamp"/>, <see cref="ArrowIpcType.Time32"/>, <see cref="ArrowIpcType.Time64"/> or <see cref="ArrowIpcType.Duration"/> column; <see langword="null"/> for other types.</summary>
    public TimeUnit? Unit => IpcType.HasUnit ? IpcType.Unit : null;

    /// <summary>The time zone of a <see cref="ArrowIpcType.Timestamp"/> column (an IANA name or an offset such as <c>+07:30</c>); <see langword="null"/> when it has none or is of another type.</summary>
    public string? TimeZone => IpcType.TimeZone;

    /// <summary>The precision (the most digits) a Decimal column declares, of any bit width; <see langword="null"/> for other types.</summary>
    public int? Precision => IpcType.Code == IpcTypeCode.Decimal ? IpcType.Precision : null;

    /// <summary>The scale (the digits after the point) a Decimal column declares, of any bit width; <see langword="null"/> for other types.</summary>
    public int? Scale => IpcType.Code == IpcTypeCode.Decimal ? IpcType.Scale : null;

    /// <summary>The size in bytes of every value of a <see cref="ArrowIpcType.FixedSizeBinary"/> column, as declared; <see langword="null"/> for other types.</summary>
    public int? ByteWidth => IpcType.Code == IpcTypeCode.FixedSizeBinary ? IpcType.ByteWidth : null;

    /// <summary>Whether the column is dictionary-encoded (its rows are indices into a dictionary of values); the reader reads such a column of strings or binary with <see cref="ArrowIpcReader.ReadDictionaryColumn(string, AllocationOptions)"/>.</summary>
    public bool IsDictionaryEncoded { get; }

    internal IpcType IpcType { get; }

    internal IpcLayout Layout { get; }

    /// <summary>The id of a dictionary-encoded column's dictionary, which its dictionary batches carry.</summary>
    internal long DictionaryId { get; }

    /// <summary>The integer type of a dictionary-encoded column's indices; <see langword="null"/> for a column that is not.</summary>
    internal IpcType? IndexType { get; }

    /// <summary>The name, type and nullability, e.g. <c>ts: Timestamp(Millisecond, UTC), nullable</c>.</summary>
    public override string ToString() =>
        $"{Name}: {(IsDictionaryEncoded ? "Dictionary<" + TypeName + ">" : TypeName)}{(IsNullable ? ", nullable" : string.Empty)}";
}
