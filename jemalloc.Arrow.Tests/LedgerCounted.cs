namespace jemalloc.Arrow.Tests;

/// <summary>
/// Tests that compare the ledger's live count before and after: the count is process-wide, so they
/// run alone, after the tests that run in parallel.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LedgerCounted
{
    public const string Name = "ledger counted";
}
