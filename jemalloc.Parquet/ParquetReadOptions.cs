namespace jemalloc.Parquet;

/// <summary>How a <see cref="NativeParquetReader"/> reads a file: the checks it makes of the file's pages.</summary>
/// <remarks>An instance is immutable; <see cref="Default"/> is the one the reader's path-only constructor uses.</remarks>
public sealed record ParquetReadOptions
{
    /// <summary>The defaults: page checksums verified.</summary>
    public static ParquetReadOptions Default { get; } = new();

    /// <summary>
    /// Whether the CRC-32 of each page that carries one is checked before the page is decoded:
    /// <see langword="true"/> unless set. A page whose bytes do not match its checksum (a damaged file)
    /// is then an <see cref="InvalidDataException"/> naming the file, the column and the row group,
    /// instead of values that read as damaged or a decoding error. Pages written without a checksum
    /// (the writer's choice: <see cref="NativeParquetWriter.WritePageChecksums"/>) are read unchecked either way.
    /// </summary>
    /// <remarks>The check reads each page's bytes once more before they are decompressed.</remarks>
    public bool VerifyPageChecksums { get; init; } = true;
}
