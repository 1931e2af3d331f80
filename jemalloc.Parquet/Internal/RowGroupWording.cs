namespace jemalloc.Parquet.Internal;

/// <summary>
/// How a read words two of its row-group messages (the pages ending before the row group's rows, and
/// holding more values than them). The numeric, flat-type and string reads each had a loop of their
/// own, whose messages differ in those phrasings; the one loop keeps each read's own.
/// </summary>
internal enum RowGroupWording
{
    /// <summary>ReadColumn and ReadNullableColumn of a numeric column: "ends at row R, in row group G"; "holds more values in row group G".</summary>
    Numeric,

    /// <summary>Decimal, fixed-size binary and FLOAT16 reads: "ends at row R of row group G"; "of row group G holds more values".</summary>
    Flat,

    /// <summary>String reads: "ends at row R of row group G"; "holds more values in row group G".</summary>
    Strings,
}
