namespace jemalloc.Tests.Adversarial;

/// <summary>
/// A stale copy kept since a slot's first free stays invalid over two million reuses. The wrap of the
/// 32-bit generation (2^31 reuses) cannot be reached through the public API in a test: no public
/// member shows a slot or its generation, and 2^31 cycles take minutes.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class GenerationTests
{
    [Fact]
    public void A_stale_copy_never_becomes_valid_again_over_many_reuses() =>
        AdversarialChild.AssertClean("generation-reuse");
}
