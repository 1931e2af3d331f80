namespace jemalloc.Tests.Tuning;

/// <summary>
/// Tests that change process-wide jemalloc settings (background threads, default decay times): xunit
/// runs this collection alone, after the parallel ones, so no other test sees a setting mid-change.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class GlobalSettings
{
    /// <summary>The collection's name, for <see cref="CollectionAttribute"/>.</summary>
    public const string Name = "Global jemalloc settings";
}
