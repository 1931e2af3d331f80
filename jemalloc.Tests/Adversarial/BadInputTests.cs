namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Bad input: absurd sizes (0, negative, sizeof(T)*n overflow, beyond any address space), bad indexes
/// and ranges on every member and on leases, bad strings, bad AllocationOptions flags. Each is a
/// conventional .NET exception that leaves the structure unchanged and leaks nothing.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class BadInputTests
{
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData("bad-sizes")]
    [InlineData("bad-indexes")]
    [InlineData("bad-ranges")]
    [InlineData("bad-strings")]
    public void Bad_arguments_throw_and_leak_nothing(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    /// <summary>
    /// Flags naming a thread cache or arena that does not exist, raw garbage flags, a destroyed
    /// arena's flags: refused (ArgumentException, ObjectDisposedException) before they reach jemalloc.
    /// </summary>
    [Theory]
    [InlineData("bad-flags-thread-cache")]
    [InlineData("bad-flags-arena")]
    [InlineData("bad-flags-raw")]
    [InlineData("bad-flags-destroyed-arena")]
    [InlineData("bad-flags-unowned-arena")]
    public void Bad_allocation_flags_are_refused_not_passed_to_jemalloc(string scenario) =>
        AdversarialChild.AssertClean(scenario);
}
