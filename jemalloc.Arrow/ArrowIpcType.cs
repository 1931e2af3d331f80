namespace jemalloc.Arrow;

/// <summary>The Arrow type of an IPC column, as <see cref="ArrowIpcReader"/> describes it.</summary>
/// <remarks>
/// A column of a type named here (other than <see cref="Null"/>) can be read into a native column, and
/// <see cref="ArrowIpcWriter"/> writes them. <see cref="Other"/> covers the rest (nested types, 256-bit
/// decimals, intervals, views, unions): <see cref="ArrowIpcField.TypeName"/> says which.
/// </remarks>
#pragma warning disable CA1720 // The members are Arrow's own type names.
public enum ArrowIpcType
{
    /// <summary>A type the reader does not read; <see cref="ArrowIpcField.TypeName"/> names it.</summary>
    Other,

    /// <summary>Null: every row is null; no values to read.</summary>
    Null,

    /// <summary>Boolean, bit-packed; read as <see cref="bool"/>.</summary>
    Boolean,

    /// <summary>Signed 8-bit integers (<see cref="sbyte"/>).</summary>
    Int8,

    /// <summary>Unsigned 8-bit integers (<see cref="byte"/>).</summary>
    UInt8,

    /// <summary>Signed 16-bit integers (<see cref="short"/>).</summary>
    Int16,

    /// <summary>Unsigned 16-bit integers (<see cref="ushort"/>).</summary>
    UInt16,

    /// <summary>Signed 32-bit integers (<see cref="int"/>).</summary>
    Int32,

    /// <summary>Unsigned 32-bit integers (<see cref="uint"/>).</summary>
    UInt32,

    /// <summary>Signed 64-bit integers (<see cref="long"/>).</summary>
    Int64,

    /// <summary>Unsigned 64-bit integers (<see cref="ulong"/>).</summary>
    UInt64,

    /// <summary>16-bit floating point (<see cref="System.Half"/>).</summary>
    HalfFloat,

    /// <summary>32-bit floating point (<see cref="float"/>).</summary>
    Float,

    /// <summary>64-bit floating point (<see cref="double"/>).</summary>
    Double,

    /// <summary>Days since the UNIX epoch, as <see cref="int"/>.</summary>
    Date32,

    /// <summary>Milliseconds since the UNIX epoch, as <see cref="long"/>.</summary>
    Date64,

    /// <summary>Time since the UNIX epoch in <see cref="ArrowIpcField.Unit"/>, as <see cref="long"/>, in <see cref="ArrowIpcField.TimeZone"/> (none: a local time).</summary>
    Timestamp,

    /// <summary>Time of day in seconds or milliseconds (<see cref="ArrowIpcField.Unit"/>), as <see cref="int"/>.</summary>
    Time32,

    /// <summary>Time of day in microseconds or nanoseconds (<see cref="ArrowIpcField.Unit"/>), as <see cref="long"/>.</summary>
    Time64,

    /// <summary>An elapsed time in <see cref="ArrowIpcField.Unit"/>, as <see cref="long"/>.</summary>
    Duration,

    /// <summary>UTF-8 strings with 32-bit offsets.</summary>
    Utf8,

    /// <summary>Byte strings with 32-bit offsets.</summary>
    Binary,

    /// <summary>UTF-8 strings with 64-bit offsets.</summary>
    LargeUtf8,

    /// <summary>Byte strings with 64-bit offsets.</summary>
    LargeBinary,

    /// <summary>128-bit decimals (<see cref="ArrowIpcField.Precision"/> and <see cref="ArrowIpcField.Scale"/>), read into a <see cref="DecimalColumn"/>.</summary>
    Decimal128,

    /// <summary>Values of <see cref="ArrowIpcField.ByteWidth"/> bytes each, read into a <see cref="FixedSizeBinaryColumn"/>.</summary>
    FixedSizeBinary,
}
#pragma warning restore CA1720
