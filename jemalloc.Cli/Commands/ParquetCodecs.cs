using ParquetSharp;

namespace jemalloc.Cli.Commands;

/// <summary>The Parquet codecs the verbs that write a Parquet file take as <c>--codec</c>.</summary>
public static class ParquetCodecs
{
    /// <summary>The codec named <paramref name="name"/>.</summary>
    /// <exception cref="CommandLineException">No codec has that name; the message starts with <paramref name="verb"/>.</exception>
    public static Compression Parse(string name, string verb) => name switch
    {
        "zstd" => Compression.Zstd,
        "snappy" => Compression.Snappy,
        "gzip" => Compression.Gzip,
        "lz4" => Compression.Lz4,
        "brotli" => Compression.Brotli,
        "none" => Compression.Uncompressed,
        _ => throw new CommandLineException($"{verb}: unknown --codec '{name}'; the codecs are zstd, snappy, gzip, lz4, brotli and none."),
    };
}
