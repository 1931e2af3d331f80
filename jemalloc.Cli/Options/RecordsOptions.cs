using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench records</c>: a big long-lived record table under a request loop, managed against native.</summary>
[Verb("records", HelpText = "A long-lived table of N records {Id, Name, Category, Score, Updated} under a request loop (lookups by id, a filtered scan, renames, short-lived garbage) on three sides: class records, struct records + Dictionary, native records (HugeArray + Utf8StringStore + NativeHashIndex). Reports build time, GC pauses, latency, memory and throughput; results are checked equal across sides.")]
public sealed class RecordsOptions : OptionsOnlyVerb
{
    /// <summary>Records in the table.</summary>
    [Option("records", Default = 10_000_000L, HelpText = "Records in the table (at least 65536).")]
    public long Records { get; set; } = 10_000_000;

    /// <summary>Requests in the loop.</summary>
    [Option("requests", Default = 20_000, HelpText = "Requests in the loop.")]
    public int Requests { get; set; } = 20_000;

    /// <summary>The sides to run.</summary>
    [Option("side", HelpText = "The sides to run, comma-separated: class, struct, native (default: all three).")]
    public string? Sides { get; set; }

    /// <summary>Induced full blocking collections.</summary>
    [Option("full-gcs", Default = 4, HelpText = "Full blocking GCs induced at evenly spaced requests on every side.")]
    public int FullCollections { get; set; } = 4;

    /// <summary>Run every side in this process.</summary>
    [Option("in-process", HelpText = "Run the sides one after another in this process (peak RSS is then the largest so far, not each side's own).")]
    public bool InProcess { get; set; }

    /// <summary>Where to write the chart, if anywhere.</summary>
    [Option("plot", HelpText = "Also write a chart of each side's p99 request latency and longest GC pause to this .svg or .png file.")]
    public string? Plot { get; set; }

    /// <summary>Internal: this process is a child running one side.</summary>
    [Option("child", Hidden = true)]
    public bool Child { get; set; }

    /// <summary>Test hook: the side whose result is corrupted on purpose.</summary>
    [Option("corrupt", Hidden = true)]
    public string? Corrupt { get; set; }
}
