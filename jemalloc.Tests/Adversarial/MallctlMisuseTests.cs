namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Dangerous mallctl calls through MallctlKeys and Jem.*Mallctl, each in its own child process: a
/// clear exception (MallctlException or another conventional type, printed by the child) or, for an
/// arena the library owns, handling that keeps its structures consistent; never a crash.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class MallctlMisuseTests
{
    [Theory]
    [InlineData("mallctl-arenas-create-set")]
    [InlineData("mallctl-arenas-create-command")]
    [InlineData("mallctl-tcache-flush")]
    [InlineData("mallctl-tcache-destroy")]
    [InlineData("mallctl-hooks-remove")]
    [InlineData("mallctl-extent-hooks")]
    [InlineData("mallctl-tcache-create-command")]
    [InlineData("mallctl-arenas-lookup-read")]
    [InlineData("mallctl-arenas-lookup-bad-pointer")]
    public void Keys_the_raw_api_cannot_serve_are_refused(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Theory]
    [InlineData("mallctl-arena-reset-owned")]
    [InlineData("mallctl-arena-destroy-owned")]
    [InlineData("mallctl-thread-arena-then-reset")]
    public void Raw_arena_keys_cannot_free_the_library_structures_under_their_owners(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void Bad_keys_and_types_throw_MallctlException() =>
        AdversarialChild.AssertClean("mallctl-bad-keys");
}
