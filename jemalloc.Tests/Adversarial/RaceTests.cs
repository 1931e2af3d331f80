namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Races (2+ threads, about 2 s each): Free/Dispose vs every bulk operation, Vector*, Parallel*,
/// enumeration and leases; arena Reset vs Dispose, allocation (while the ledger grows) and
/// Acquire/Lease; racy copies of a FixedBuffer variable; the finalizer vs an open lease. An operation
/// completes on live memory or throws ObjectDisposedException; structures allocated after a free
/// (which reuse its memory) never change; nothing crashes or hangs.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class RaceTests
{
    [Theory]
    [InlineData("race-free-vs-ops-fixedbuffer")]
    [InlineData("race-dispose-vs-ops-safearray")]
    [InlineData("race-dispose-vs-ops-hugearray")]
    public void Operations_racing_a_free_complete_or_throw_and_never_touch_reused_memory(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void Enumeration_racing_a_free_throws_and_never_yields_another_structure_data() =>
        AdversarialChild.AssertClean("race-free-vs-enumeration");

    [Theory]
    [InlineData("race-reset-vs-dispose")]
    [InlineData("race-reset-vs-allocation")]
    [InlineData("race-reset-vs-allocation-paced")]
    [InlineData("race-reset-vs-acquire")]
    public void Arena_reset_racing_other_threads_neither_fails_spuriously_nor_hangs(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void A_mallctl_reset_of_an_unowned_arena_never_frees_a_structure_allocated_meanwhile() =>
        AdversarialChild.AssertClean("race-unowned-arena-reset-vs-allocation");

    [Fact]
    public void A_racy_copy_of_a_FixedBuffer_is_always_one_whole_buffer() =>
        AdversarialChild.AssertClean("race-fixedbuffer-copies");

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void The_finalizer_never_frees_memory_under_an_open_lease() =>
        AdversarialChild.AssertClean("race-finalizer-vs-lease");
}
