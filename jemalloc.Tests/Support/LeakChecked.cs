namespace jemalloc.Tests.Support;

/// <summary>
/// The test classes that check the ledger and jemalloc's allocated bytes before and after they run.
/// xunit runs this collection alone, after the parallel ones, so no other test allocates meanwhile.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LeakChecked
{
    /// <summary>The collection's name, for <see cref="CollectionAttribute"/>.</summary>
    public const string Name = "Leak-checked native structures";
}
