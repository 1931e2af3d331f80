namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Where BenchmarkDotNet writes the results, besides the console.</summary>
[Flags]
public enum ExportFormats
{
    /// <summary>Console only.</summary>
    None = 0,

    /// <summary>GitHub-flavoured markdown tables.</summary>
    Markdown = 1,

    /// <summary>CSV tables.</summary>
    Csv = 2,

    /// <summary>HTML tables.</summary>
    Html = 4,

    /// <summary>All of them.</summary>
    All = Markdown | Csv | Html,
}
