namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// The jembench tests run one at a time and not alongside other collections: a benchmark run uses
/// process-wide state (the suite's sizes, the result checks, the console, forced garbage collections).
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class JembenchRuns
{
    /// <summary>The collection's name, for <see cref="CollectionAttribute"/>.</summary>
    public const string Name = "jembench";
}
