namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Checked mode in arenas (JEMALLOC_NET_CHECKED=1, in a child process): a free in a JemArena and the
/// arena's Reset poison and hold the memory, so stale spans and racing indexers read poison or throw,
/// never a later structure's data, and their writes are reported instead of landing in live
/// structures. A rented JemMemoryPool block refuses the arena's reset, checked mode or not.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class ArenaCheckedModeTests
{
    [Fact]
    public void A_free_in_an_arena_is_poisoned_and_held_so_a_stale_span_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean("checked-arena-free", checkedMode: true);

    [Fact]
    public void An_arena_reset_poisons_and_holds_structures_and_raw_blocks_so_new_structures_never_get_them() =>
        AdversarialChild.AssertClean("checked-arena-reset", checkedMode: true);

    [Fact]
    public void A_reset_with_a_raw_allocation_from_outside_checked_mode_poisons_and_frees_the_quarantined_blocks_once() =>
        AdversarialChild.AssertClean("checked-arena-reset-untracked-raw", checkedMode: true);

    [Fact]
    public void Disposing_an_arena_holds_its_blocks_poisoned_and_destroys_it_once_the_quarantine_lets_them_go() =>
        AdversarialChild.AssertClean("checked-arena-dispose-quarantined", checkedMode: true);

    [Fact]
    public void Indexers_racing_an_arena_dispose_read_its_value_or_poison_never_unmapped_or_reused_memory() =>
        AdversarialChild.AssertClean("checked-arena-dispose-racing-indexer", checkedMode: true);

    [Fact]
    public void Indexers_racing_an_arena_reset_never_see_or_change_a_structure_made_after_it() =>
        AdversarialChild.AssertClean("checked-arena-reset-racing-indexer", checkedMode: true);

    [Fact]
    public void A_mallctl_reset_or_destroy_of_an_unowned_arena_takes_its_blocks_out_of_the_quarantine_first() =>
        AdversarialChild.AssertClean("checked-unowned-arena-mallctl-reset", checkedMode: true);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_rented_pool_block_refuses_its_arena_s_reset_so_its_span_never_writes_into_a_new_structure(bool checkedMode) =>
        AdversarialChild.AssertClean("arena-pool-span-vs-reset", checkedMode);
}
