namespace jemalloc.Tests.Native;

/// <summary>
/// The xunit collection of tests that change or measure process-wide jemalloc state (global
/// statistics, the message hook): it runs on its own, after the parallel collections.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessWideState
{
    public const string Name = "jemalloc process-wide state";
}
