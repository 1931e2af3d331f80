using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench io</c>: jemalloc.NET's memory under .NET's I/O abstractions, against the managed writers and pools.</summary>
[Verb("io", HelpText = "jemalloc.NET under .NET I/O. --json: Utf8JsonWriter writes one deterministic JSON document into NativeBufferWriter<byte>, ArrayBufferWriter<byte> and CommunityToolkit's ArrayPoolBufferWriter<byte> (same initial capacity). --pipe: a System.IO.Pipelines Pipe pumps a deterministic stream in 4-64 KiB segments with JemMemoryPool against the default pool. Time, managed allocations, GC counts and peak RSS, each side in its own process; every byte is checked.")]
public sealed class IoOptions : OptionsOnlyVerb
{
    /// <summary>Run the JSON suite.</summary>
    [Option("json", HelpText = "Run the JSON suite.")]
    public bool Json { get; set; }

    /// <summary>Run the pipe suite.</summary>
    [Option("pipe", HelpText = "Run the pipe suite.")]
    public bool Pipe { get; set; }

    /// <summary>The JSON document's size.</summary>
    [Option("json-size", Default = "100MB", HelpText = "The JSON document's size in bytes, or with a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB. Past 1 GiB ArrayPoolBufferWriter, past 2 GiB ArrayBufferWriter cannot hold it (they say so and are not run).")]
    public string JsonSize { get; set; } = "100MB";

    /// <summary>The bytes to pump through the pipe.</summary>
    [Option("pipe-size", Default = "4GB", HelpText = "The bytes to pump through the pipe, as --json-size takes them.")]
    public string PipeSize { get; set; } = "4GB";

    /// <summary>The writers of the JSON suite.</summary>
    [Option("writers", HelpText = "The JSON suite's sides, comma-separated: native, array, arraypool, and limit (the encoding alone, into a native block presized and paged in first: the machine's limit) (default: all four).")]
    public string? Writers { get; set; }

    /// <summary>The pools of the pipe suite.</summary>
    [Option("pools", HelpText = "The pipe suite's pools, comma-separated: jem, shared (default: both).")]
    public string? Pools { get; set; }

    /// <summary>The initial capacity of every JSON writer.</summary>
    [Option("initial-capacity", Default = "64KiB", HelpText = "The capacity every JSON writer starts with, as --json-size takes it.")]
    public string InitialCapacity { get; set; } = "64KiB";

    /// <summary>Start every JSON writer with room for the whole document.</summary>
    [Option("presized", HelpText = "Start every JSON writer with room for the whole document (no growth): with a run without it, shows what growth costs.")]
    public bool Presized { get; set; }

    /// <summary>Rounds of every side.</summary>
    [Option("rounds", Default = 3, HelpText = "Rounds: each runs every side once, in turn; the table shows each side's best round and the goals print every round's ratio.")]
    public int Rounds { get; set; } = 3;

    /// <summary>Run every side in this process.</summary>
    [Option("in-process", HelpText = "Run the sides one after another in this process (peak RSS is then the largest so far, not each side's own).")]
    public bool InProcess { get; set; }

    /// <summary>Internal: this process is a child running one side.</summary>
    [Option("child", Hidden = true)]
    public bool Child { get; set; }

    /// <summary>Test hook: the side whose result is corrupted on purpose.</summary>
    [Option("corrupt", Hidden = true)]
    public string? Corrupt { get; set; }
}
