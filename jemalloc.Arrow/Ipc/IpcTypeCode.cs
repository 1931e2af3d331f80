namespace jemalloc.Arrow.Ipc;

/// <summary>The members of the <c>Type</c> union of Arrow's Schema.fbs, by their union tag.</summary>
internal static class IpcTypeCode
{
    internal const byte Null = 1;
    internal const byte Int = 2;
    internal const byte FloatingPoint = 3;
    internal const byte Binary = 4;
    internal const byte Utf8 = 5;
    internal const byte Bool = 6;
    internal const byte Decimal = 7;
    internal const byte Date = 8;
    internal const byte Time = 9;
    internal const byte Timestamp = 10;
    internal const byte Interval = 11;
    internal const byte List = 12;
    internal const byte Struct = 13;
    internal const byte Union = 14;
    internal const byte FixedSizeBinary = 15;
    internal const byte FixedSizeList = 16;
    internal const byte Map = 17;
    internal const byte Duration = 18;
    internal const byte LargeBinary = 19;
    internal const byte LargeUtf8 = 20;
    internal const byte LargeList = 21;
    internal const byte RunEndEncoded = 22;
    internal const byte BinaryView = 23;
    internal const byte Utf8View = 24;
    internal const byte ListView = 25;
    internal const byte LargeListView = 26;

    private static readonly string[] Names =
    [
        "NONE", "Null", "Int", "FloatingPoint", "Binary", "Utf8", "Bool", "Decimal", "Date", "Time", "Timestamp",
        "Interval", "List", "Struct", "Union", "FixedSizeBinary", "FixedSizeList", "Map", "Duration",
        "LargeBinary", "LargeUtf8", "LargeList", "RunEndEncoded", "BinaryView", "Utf8View", "ListView", "LargeListView",
    ];

    /// <summary>The union member's name, or <c>type id N</c> for a tag this reader does not know.</summary>
    internal static string NameOf(byte code) => code < Names.Length ? Names[code] : $"type id {code}";

    /// <summary>
    /// The buffers a node of this type has in a record batch (Arrow format version 5), besides its
    /// children's and a view's variadic buffers; -1 for a tag this reader does not know.
    /// </summary>
    internal static int BuffersOf(byte code, short unionMode) => code switch
    {
        Null or RunEndEncoded => 0,
        Struct or FixedSizeList => 1,
        Union => unionMode == 0 ? 1 : 2,
        Int or FloatingPoint or Bool or Decimal or Date or Time or Timestamp or Interval or FixedSizeBinary or Duration
            or List or LargeList or Map or BinaryView or Utf8View => 2,
        Binary or Utf8 or LargeBinary or LargeUtf8 or ListView or LargeListView => 3,
        _ => -1,
    };
}
