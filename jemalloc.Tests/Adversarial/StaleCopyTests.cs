namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Stale copies after Free, Dispose and arena Reset/Dispose: every public member of every structure,
/// through any copy (including one stored in native memory) and on other threads, throws
/// ObjectDisposedException; a structure that reuses the memory or slot is untouched.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class StaleCopyTests
{
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData("stale-fixedbuffer")]
    [InlineData("stale-utf8string")]
    [InlineData("stale-safearray")]
    [InlineData("stale-hugearray")]
    [InlineData("stale-arena-reset")]
    [InlineData("stale-arena-dispose")]
    [InlineData("stale-arena-options")]
    public void Every_member_of_a_stale_structure_throws_ObjectDisposedException(string scenario) =>
        AdversarialChild.AssertClean(scenario);
}
