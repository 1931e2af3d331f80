using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench info</c>: what jemalloc this is and how it is configured.</summary>
[Verb("info", HelpText = "jemalloc's version, effective options and statistics.")]
public sealed class InfoOptions : OptionsOnlyVerb
{
    /// <summary>JSON output.</summary>
    [Option("json", HelpText = "Print jemalloc's full report as JSON (malloc_stats_print).")]
    public bool Json { get; set; }

    /// <summary>jemalloc options.</summary>
    [Option("conf", HelpText = "Start jemalloc with these options (malloc_conf) first, to see their effect.")]
    public string? Conf { get; set; }
}
