using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: checked mode's detection (JEMALLOC_NET_CHECKED=1, in a child process). The races and
/// stale spans the contract leaves to the user read poison (0xDB) or throw, never another live
/// structure's data, and writes after the free are reported through UseAfterFreeDetected and the
/// counter. In arenas, a free and the arena's Reset poison and hold the memory, so stale spans and racing
/// indexers read poison or throw, never a later structure's data. Families: buffers
/// (<see cref="BufferCheckedModeScenarios"/>), arenas (<see cref="ArenaCheckedModeScenarios"/>), I/O
/// (<see cref="IoCheckedModeScenarios"/>); each scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class CheckedModeTests
{
    // Buffers.

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void A_span_kept_past_its_lease_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean(BufferCheckedModeScenarios.CheckedStaleSpan, checkedMode: true);

    [Fact]
    public void Racing_indexer_access_after_a_free_never_sees_or_changes_another_structure() =>
        AdversarialChild.AssertClean(BufferCheckedModeScenarios.CheckedRacingIndexer, checkedMode: true);

    // Arenas.

    [Fact]
    public void A_free_in_an_arena_is_poisoned_and_held_so_a_stale_span_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaFree, checkedMode: true);

    [Fact]
    public void An_arena_reset_poisons_and_holds_structures_and_raw_blocks_so_new_structures_never_get_them() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaReset, checkedMode: true);

    [Fact]
    public void A_reset_with_a_raw_allocation_from_outside_checked_mode_poisons_and_frees_the_quarantined_blocks_once() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaResetUntrackedRaw, checkedMode: true);

    [Fact]
    public void Disposing_an_arena_holds_its_blocks_poisoned_and_destroys_it_once_the_quarantine_lets_them_go() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaDisposeQuarantined, checkedMode: true);

    [Fact]
    public void Indexers_racing_an_arena_dispose_read_its_value_or_poison_never_unmapped_or_reused_memory() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaDisposeRacingIndexer, checkedMode: true);

    [Fact]
    public void Indexers_racing_an_arena_reset_never_see_or_change_a_structure_made_after_it() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedArenaResetRacingIndexer, checkedMode: true);

    [Fact]
    public void A_mallctl_reset_or_destroy_of_an_unowned_arena_takes_its_blocks_out_of_the_quarantine_first() =>
        AdversarialChild.AssertClean(ArenaCheckedModeScenarios.CheckedUnownedArenaMallctlReset, checkedMode: true);

    // I/O.

    [Fact]
    public void A_writer_growth_keeps_the_old_block_until_dispose_which_quarantines_it_so_a_span_from_before_then_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean(IoCheckedModeScenarios.CheckedWriterGrowth, checkedMode: true);

    [Fact]
    public void In_checked_mode_a_dropped_pool_owner_s_span_stays_intact_until_the_pool_s_dispose_then_reads_poison() =>
        AdversarialChild.AssertClean(IoCheckedModeScenarios.CheckedPoolDroppedOwnerSpan, checkedMode: true);

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void In_checked_mode_a_writer_span_used_after_dispose_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean(IoCheckedModeScenarios.CheckedWriterSpanAfterDispose, checkedMode: true);

    [Fact]
    public void In_checked_mode_a_pool_block_span_used_after_its_owner_s_dispose_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean(IoCheckedModeScenarios.CheckedPoolSpanAfterDispose, checkedMode: true);

    [Fact]
    public void In_checked_mode_a_stream_written_with_a_span_or_checked_memory_of_its_own_block_never_copies_from_the_block_its_growth_freed() =>
        AdversarialChild.AssertClean(IoCheckedModeScenarios.CheckedStreamWriteOfItsOwnBlock, checkedMode: true);
}
