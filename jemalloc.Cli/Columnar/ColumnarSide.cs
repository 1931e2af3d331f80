namespace jemalloc.Cli.Columnar;

/// <summary>The layouts <c>jembench columnar</c> compares.</summary>
public enum ColumnarSide
{
    /// <summary>ParquetSharp decodes into one managed array per column.</summary>
    Managed,

    /// <summary>NativeParquetReader decodes into one <see cref="HugeArray{T}"/> per column on 4 KiB pages.</summary>
    Native4K,

    /// <summary>NativeParquetReader decodes into one <see cref="HugeArray{T}"/> per column on transparent huge pages.</summary>
    NativeHuge,

    /// <summary>ParquetSharp decodes into one reused buffer per column and sums as it goes: the decoder's limit, no columns kept.</summary>
    Decode,
}
