using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench columnar</c>: load Parquet columns, sum them and free them, managed arrays against native columns.</summary>
[Verb("columnar", HelpText = "The columnar workload end to end: K columns of random numbers (doubles) under a memory budget are written once as compressed Parquet, then each side loads them, sums down each column and across rows, and frees them: managed (ParquetSharp into managed arrays), native-4k (NativeParquetReader into HugeArray on 4 KiB pages), native-huge (the same on transparent huge pages), decode (ParquetSharp into one reused buffer per column: the decoder's limit). Each side in its own process; reports wall, user and system time, page faults, context switches, peak RSS and GC counts; every sum is checked against a reference.")]
public sealed class ColumnarOptions : OptionsOnlyVerb
{
    /// <summary>The number of columns.</summary>
    [Option("columns", Default = 8, HelpText = "The number of columns (1-1024).")]
    public int Columns { get; set; } = 8;

    /// <summary>Rows per column; 0 fills the budget.</summary>
    [Option("rows", Default = 0L, HelpText = "Rows of every column; 0 (the default) takes as many as fit in --budget. Past 2^31 the managed side cannot run (one .NET array per column) and says so; the other sides run.")]
    public long Rows { get; set; }

    /// <summary>The memory budget of the columns.</summary>
    [Option("budget", Default = "1GiB", HelpText = "The memory the columns may take together (8 bytes a value), in bytes or with a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB.")]
    public string Budget { get; set; } = "1GiB";

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
    [Option("in-process", HelpText = "Run the sides one after another in this process (peak RSS is then the largest so far, not each side's own).")]
    public bool InProcess { get; set; }

    /// <summary>Where to write the chart, if anywhere.</summary>
    [Option("plot", HelpText = "Also write a chart of each side's load, sum and free times, with its page faults and gen-2 collections, to this .svg or .png file.")]
    public string? Plot { get; set; }

    /// <summary>Whether the file is written without page checksums and read without verifying them.</summary>
    [Option("no-page-checksums", HelpText = "Write the file without CRC-32 page checksums and read it without verifying them, on every side. By default the pages carry checksums and every side verifies them, as NativeParquetReader does unless told not to; compare the two runs for the check's cost.")]
    public bool NoPageChecksums { get; set; }

    /// <summary>Internal: this process is a child running one side on this file.</summary>
    [Option("child-file", Hidden = true)]
    public string? ChildFile { get; set; }
}
