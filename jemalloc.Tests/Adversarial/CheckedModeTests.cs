namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Checked mode (JEMALLOC_NET_CHECKED=1, in a child process): the races the contract leaves to the
/// user read poison (0xDB) or throw, never another live structure's data, and writes after the free
/// are reported through UseAfterFreeDetected and the counter.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class CheckedModeTests
{
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void A_span_kept_past_its_lease_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean("checked-stale-span", checkedMode: true);

    [Fact]
    public void A_writer_growth_keeps_the_old_block_until_dispose_which_quarantines_it_so_a_span_from_before_then_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean("checked-writer-growth", checkedMode: true);

    [Fact]
    public void Racing_indexer_access_after_a_free_never_sees_or_changes_another_structure() =>
        AdversarialChild.AssertClean("checked-racing-indexer", checkedMode: true);

    [Fact]
    public void Without_checked_mode_a_span_kept_past_its_lease_does_not_crash()
    {
        // Documented as the user's responsibility; the output says whether it reached the next buffer.
        string output = AdversarialChild.AssertClean("unchecked-stale-span");
        Assert.Contains(AdversarialChild.Lines(output), line => line.StartsWith("INFO unchecked:", StringComparison.Ordinal));
    }
}
