using CommandLine;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Options;

/// <summary>The options every benchmark verb has: how to run and where results go.</summary>
public abstract class RunOptions
{
    /// <summary>Measure cold starts.</summary>
    [Option('c', "cold-start", HelpText = "Measure cold starts: no pilot or warm-up; every iteration is one operation.")]
    public bool ColdStart { get; set; }

    /// <summary>Run each benchmark once.</summary>
    [Option("once", HelpText = "Run each benchmark exactly once (one cold operation).")]
    public bool Once { get; set; }

    /// <summary>The number of measured iterations.</summary>
    [Option('t', "target-count", HelpText = "The number of measured iterations of each benchmark (1-1000).")]
    public int? TargetCount { get; set; }

    /// <summary>A smoke run.</summary>
    [Option("quick", HelpText = "A smoke run: each benchmark once, small default sizes, short console output.")]
    public bool Quick { get; set; }

    /// <summary>jemalloc options.</summary>
    [Option("conf", HelpText = "Start jemalloc with these options (malloc_conf), e.g. \"narenas:2,dirty_decay_ms:0\".")]
    public string? Conf { get; set; }

    /// <summary>Result file formats.</summary>
    [Option('e', "exporters", HelpText = "Result files to write: a comma-separated list of markdown, csv, html, or none (default: all three).")]
    public string? Exporters { get; set; }

    /// <summary>The results folder.</summary>
    [Option("artifacts", HelpText = "The folder for result files (default: ./BenchmarkDotNet.Artifacts).")]
    public string? Artifacts { get; set; }

    /// <summary>The run settings these options describe.</summary>
    /// <exception cref="CommandLineException">An option has a wrong value.</exception>
    public RunSettings ToRunSettings()
    {
        if (TargetCount is int count && (count < 1 || count > 1000))
        {
            throw new CommandLineException($"--target-count must be between 1 and 1000; {count} is not.");
        }

        if (Once && TargetCount is not null)
        {
            throw new CommandLineException("--once and --target-count contradict each other: choose one.");
        }

        if (Conf is not null)
        {
            try
            {
                JemConfiguration.Validate(Conf);
            }
            catch (ArgumentException e)
            {
                throw new CommandLineException($"--conf: {e.Message.Split(" (Parameter")[0]}");
            }
        }

        return new RunSettings
        {
            ColdStart = ColdStart,
            Once = Once,
            Quick = Quick,
            TargetCount = TargetCount,
            Conf = Conf,
            Exporters = ParseExporters(),
            ArtifactsPath = Artifacts is null ? null : Path.GetFullPath(Artifacts),
        };
    }

    private ExportFormats ParseExporters()
    {
        if (Exporters is null)
        {
            return Quick ? ExportFormats.None : ExportFormats.All;
        }

        ExportFormats formats = ExportFormats.None;
        foreach (string name in Exporters.Split(','))
        {
            formats |= name.Trim().ToUpperInvariant() switch
            {
                "MARKDOWN" or "MD" => ExportFormats.Markdown,
                "CSV" => ExportFormats.Csv,
                "HTML" => ExportFormats.Html,
                "NONE" => ExportFormats.None,
                _ => throw new CommandLineException($"--exporters: unknown format '{name}'; use markdown, csv, html or none."),
            };
        }

        return formats;
    }
}
