using ParquetSharp;

namespace jemalloc.Parquet;

/// <summary>
/// What a Parquet file says of one of its columns: how its values are stored (the physical type and,
/// for FIXED_LEN_BYTE_ARRAY, their width) and what they mean (the logical type and its parameters),
/// so a caller knows which read to use and how to interpret what it gives (for instance, that an
/// INT64 column holds microseconds since the Unix epoch, in UTC). Made by
/// <see cref="NativeParquetReader.GetColumnInfo(string)"/>.
/// </summary>
public sealed class ParquetColumnInfo
{
    internal ParquetColumnInfo(string name, PhysicalType physicalType, LogicalTypeEnum logicalType, string logicalTypeText, bool isNullable, int typeLength, int precision, int scale, TimeUnit timeUnit, bool isAdjustedToUtc)
    {
        Name = name;
        PhysicalType = physicalType;
        LogicalType = logicalType;
        LogicalTypeText = logicalTypeText;
        IsNullable = isNullable;
        TypeLength = typeLength;
        Precision = precision;
        Scale = scale;
        TimeUnit = timeUnit;
        IsAdjustedToUtc = isAdjustedToUtc;
    }

    /// <summary>The column's name (for a field of a group, its dotted path).</summary>
    public string Name { get; }

    /// <summary>How the values are stored.</summary>
    public PhysicalType PhysicalType { get; }

    /// <summary>What the values mean: <see cref="LogicalTypeEnum.None"/> for plain numbers, otherwise DECIMAL, DATE, TIME, TIMESTAMP, INT, UUID, FLOAT16, the Null type (<see cref="LogicalTypeEnum.Nil"/>), and so on; <see cref="LogicalTypeEnum.Undefined"/> for a logical type newer than this version of Parquet knows (a BYTE_ARRAY column of one reads as binary).</summary>
    public LogicalTypeEnum LogicalType { get; }

    /// <summary>The logical type with its parameters as the file states them, for messages and logs (for instance <c>Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, ...)</c>).</summary>
    public string LogicalTypeText { get; }

    /// <summary>Whether the column may hold nulls (is OPTIONAL).</summary>
    public bool IsNullable { get; }

    /// <summary>The size of every value in bytes for a FIXED_LEN_BYTE_ARRAY column; 0 for any other.</summary>
    public int TypeLength { get; }

    /// <summary>A DECIMAL column's most digits; 0 for any other column.</summary>
    public int Precision { get; }

    /// <summary>A DECIMAL column's digits after the decimal point; 0 for any other column.</summary>
    public int Scale { get; }

    /// <summary>The unit of a TIME or TIMESTAMP column's values (milliseconds, microseconds or nanoseconds); <see cref="TimeUnit.Unknown"/> for any other column.</summary>
    public TimeUnit TimeUnit { get; }

    /// <summary>Whether a TIME or TIMESTAMP column's values are in UTC (instants); <see langword="false"/> for local times and any other column.</summary>
    public bool IsAdjustedToUtc { get; }

    /// <summary>The column's name, physical type and logical type.</summary>
    public override string ToString() => $"{Name}: {PhysicalType}{(TypeLength > 0 ? $"({TypeLength})" : "")} {LogicalTypeText}{(IsNullable ? " OPTIONAL" : " REQUIRED")}";
}
