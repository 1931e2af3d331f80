namespace jemalloc.Cli.Strings;

/// <summary>The layouts <c>jembench strings</c> compares.</summary>
public enum StringsSide
{
    /// <summary>ParquetSharp's logical readers into <c>string[]</c>, <c>decimal?[]</c> and <c>long[]</c>; filter and group-by on .NET strings.</summary>
    Managed,

    /// <summary>NativeParquetReader into native string, decimal and integer columns on 4 KiB pages; filter and group-by on the UTF-8 bytes.</summary>
    Native4K,

    /// <summary>The same on transparent huge pages.</summary>
    NativeHuge,

    /// <summary>ParquetSharp's physical readers into one reused 64K-row buffer per column, filtering and grouping batch by batch: the decoder's limit, no column kept.</summary>
    Decode,
}
