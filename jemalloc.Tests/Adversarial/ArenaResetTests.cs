using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: an arena reset or destroy under structures in use, through <see cref="JemArena"/> or
/// the raw mallctl keys, on the same thread or racing other threads: refused while a structure is
/// acquired, leased, pinned, rented or read in a scope; otherwise the structures in the arena throw
/// ObjectDisposedException afterwards, and none of them, nor any span of them, ever reaches a structure
/// made after the reset. Resets neither fail spuriously nor hang. Families: arenas
/// (<see cref="ArenaResetScenarios"/>), records (<see cref="RecordArenaResetScenarios"/>), I/O
/// (<see cref="IoArenaResetScenarios"/>), add-ons (<see cref="AddOnArenaResetScenarios"/>), raw mallctl
/// (<see cref="MallctlArenaResetScenarios"/>); each scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class ArenaResetTests
{
    // Arenas.

    [Fact]
    public void An_arena_reset_while_a_buffer_is_acquired_or_an_array_leased_is_refused_and_resets_nothing() =>
        AdversarialChild.AssertClean(ArenaResetScenarios.MisuseResetWhileInUse);

    [Theory]
    [InlineData(ArenaResetScenarios.RaceResetVsDispose)]
    [InlineData(ArenaResetScenarios.RaceResetVsAllocation)]
    [InlineData(ArenaResetScenarios.RaceResetVsAllocationPaced)]
    [InlineData(ArenaResetScenarios.RaceResetVsAcquire)]
    public void Arena_reset_racing_other_threads_neither_fails_spuriously_nor_hangs(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void A_mallctl_reset_of_an_unowned_arena_never_frees_a_structure_allocated_meanwhile() =>
        AdversarialChild.AssertClean(ArenaResetScenarios.RaceUnownedArenaResetVsAllocation);

    // Records.

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void After_an_arena_reset_an_index_and_a_store_in_it_throw_ObjectDisposedException() =>
        AdversarialChild.AssertClean(RecordArenaResetScenarios.RecordsArenaReset);

    [Fact]
    public void Reads_inside_a_read_scope_never_see_the_arena_reset_under_them_the_reset_is_refused_while_it_is_open() =>
        AdversarialChild.AssertClean(RecordArenaResetScenarios.RecordsScopeVsArenaReset);

    [Fact]
    public void In_checked_mode_reads_inside_a_read_scope_never_see_the_arena_reset_under_them() =>
        AdversarialChild.AssertClean(RecordArenaResetScenarios.RecordsScopeVsArenaReset, checkedMode: true);

    // I/O.

    [Fact]
    public void An_arena_reset_while_a_stream_grows_a_writer_in_it_is_refused_or_the_stream_throws_ObjectDisposedException() =>
        AdversarialChild.AssertClean(IoArenaResetScenarios.IoArenaResetVsStream);

    [Fact]
    public void An_arena_reset_racing_a_writer_s_spans_frees_the_block_only_before_the_first_span_and_is_refused_after_it() =>
        AdversarialChild.AssertClean(IoArenaResetScenarios.IoArenaResetVsWriterSpans);

    [Fact]
    public void A_clearing_pool_s_rent_of_a_kept_block_never_clears_memory_an_arena_reset_freed_under_it() =>
        AdversarialChild.AssertClean(IoArenaResetScenarios.IoPoolClearVsArenaReset);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_rented_pool_block_refuses_its_arena_s_reset_so_its_span_never_writes_into_a_new_structure(bool checkedMode) =>
        AdversarialChild.AssertClean(IoArenaResetScenarios.ArenaPoolSpanVsReset, checkedMode);

    [Fact]
    public void A_pool_s_trim_and_statistics_racing_pinned_rents_and_its_arena_s_destroy_keep_blocks_apart_and_balance_the_books() =>
        AdversarialChild.AssertClean(IoArenaResetScenarios.IoPoolTrimStatsVsRentsPinsAndArenaDestroy);

    // Add-ons, with and without checked mode.

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void An_arena_reset_under_arrays_of_its_Arrow_allocator_is_refused(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnArenaResetScenarios.ArenaResetUnderArrowArrays, checkedMode);

    // Raw mallctl: a clear exception or, for an arena the library owns, handling that keeps its structures consistent.

    [Theory]
    [InlineData(MallctlArenaResetScenarios.MallctlArenaResetOwned)]
    [InlineData(MallctlArenaResetScenarios.MallctlArenaDestroyOwned)]
    [InlineData(MallctlArenaResetScenarios.MallctlThreadArenaThenReset)]
    public void Raw_arena_keys_cannot_free_the_library_structures_under_their_owners(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Theory]
    [InlineData(MallctlArenaResetScenarios.MallctlThreadArenaUnownedThenReset)]
    [InlineData(MallctlArenaResetScenarios.MallctlThreadArenaUnownedThenDestroy)]
    public void An_arena_a_thread_was_moved_onto_is_never_reset_under_its_default_structures(string scenario) =>
        AdversarialChild.AssertClean(scenario);
}
