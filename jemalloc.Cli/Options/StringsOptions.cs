using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench strings</c>: load a table with string columns from Parquet, filter and group it, and free it, managed strings against native string columns.</summary>
[Verb("strings", HelpText = "A string-table workload end to end: N rows of id (INT64), category and region (STRING, a few thousand and a few hundred distinct values), note (free text, some nulls, some non-ASCII) and amount (DECIMAL(18,2), some nulls) are written once as compressed Parquet, then each side loads every column, keeps the rows whose note starts with a prefix, groups them by category (rows and sum of amount), and frees everything: managed (ParquetSharp into string[] and decimal?[]), native-4k (NativeParquetReader into native string and decimal columns, filter and group-by on the UTF-8 bytes), native-huge (the same on transparent huge pages), decode (ParquetSharp into one reused buffer per column, filtering and grouping as it goes: the decoder's limit). Each side in its own process; reports wall, user and system time, page faults, peak RSS, GC counts and pauses, and the string columns' load in MB/s; every result is checked against a reference.")]
public sealed class StringsOptions : OptionsOnlyVerb
{
    /// <summary>The rows of the table.</summary>
    [Option("rows", Default = 10_000_000L, HelpText = "The rows of the table (1 to 2,147,483,591, the most a .NET array holds, so that the managed side can run).")]
    public long Rows { get; set; } = 10_000_000;

    /// <summary>The Parquet codec.</summary>
    [Option("codec", Default = "zstd", HelpText = "The Parquet file's compression: zstd, snappy, gzip, lz4, brotli or none.")]
    public string Codec { get; set; } = "zstd";

    /// <summary>The sides to run.</summary>
    [Option("side", HelpText = "The sides to run, comma-separated: managed, native-4k, native-huge, decode (default: all four).")]
    public string? Sides { get; set; }

    /// <summary>Where the Parquet file is written.</summary>
    [Option("dir", HelpText = "The folder the Parquet file is written to and deleted from (default: the temporary folder). Put it on a disk, not on a tmpfs, whose pages would count as memory.")]
    public string? Directory { get; set; }

    /// <summary>Run every side in this process.</summary>
    [Option("in-process", HelpText = "Run the sides one after another in this process (peak RSS and the collections are then cumulative, not each side's own).")]
    public bool InProcess { get; set; }

    /// <summary>Internal: this process is a child running one side on this file.</summary>
    [Option("child-file", Hidden = true)]
    public string? ChildFile { get; set; }
}
