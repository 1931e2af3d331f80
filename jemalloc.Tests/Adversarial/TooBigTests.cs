namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Too big is an exception: more than physical memory + swap throws OutOfMemoryException at once
/// (the child's watchdog kills it, failing the test, if it starts zero-filling instead; the runner's
/// timeout fails it if it hangs).
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class TooBigTests
{
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData("too-big-safearray")]
    [InlineData("too-big-hugearray")]
    [InlineData("too-big-hugearray-just-over")]
    [InlineData("too-big-with-value")]
    public void A_structure_beyond_the_machine_throws_OutOfMemoryException(string scenario) =>
        AdversarialChild.AssertClean(scenario);
}
