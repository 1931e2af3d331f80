namespace jemalloc.Tests.Adversarial;

/// <summary>The I/O adapters' races and checked-mode cases, each in a child process (see IoScenarios there).</summary>
[Collection(AdversarialScenarios.Name)]
public sealed class IoScenarioTests
{
    [Fact]
    public void A_writer_disposed_while_a_stream_works_on_it_completes_or_throws_ObjectDisposedException_and_leaks_nothing() =>
        AdversarialChild.AssertClean("io-writer-dispose-vs-stream");

    [Fact]
    public void An_arena_reset_while_a_stream_grows_a_writer_in_it_is_refused_or_the_stream_throws_ObjectDisposedException() =>
        AdversarialChild.AssertClean("io-arena-reset-vs-stream");

    [Fact]
    public void An_arena_reset_racing_a_writer_s_spans_frees_the_block_only_before_the_first_span_and_is_refused_after_it() =>
        AdversarialChild.AssertClean("io-arena-reset-vs-writer-spans");

    [Fact]
    public void Pool_pins_racing_their_owner_s_dispose_throw_or_hold_the_block_and_the_books_balance() =>
        AdversarialChild.AssertClean("io-pool-pin-vs-dispose");

    [Fact]
    public void A_clearing_pool_s_rent_of_a_kept_block_never_clears_memory_an_arena_reset_freed_under_it() =>
        AdversarialChild.AssertClean("io-pool-clear-vs-arena-reset");

    [Fact]
    public void A_pool_disposed_while_threads_return_and_rent_frees_every_kept_block_once_and_refuses_later_rents() =>
        AdversarialChild.AssertClean("io-pool-dispose-vs-returns");

    [Fact]
    public void Pool_pins_direct_unpins_disposes_and_arena_resets_racing_end_no_pin_but_their_own_and_leave_balanced_books() =>
        AdversarialChild.AssertClean("io-pool-pins-vs-direct-unpins-dispose-and-reset");

    [Fact]
    public void Dropped_pool_owners_finalized_while_the_pool_is_disposed_are_each_freed_once() =>
        AdversarialChild.AssertClean("io-pool-finalizers-vs-pool-dispose");

    [Fact]
    public void In_checked_mode_a_dropped_pool_owner_s_span_stays_intact_until_the_pool_s_dispose_then_reads_poison() =>
        AdversarialChild.AssertClean("checked-pool-dropped-owner-span", checkedMode: true);

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void In_checked_mode_a_writer_span_used_after_dispose_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean("checked-writer-span-after-dispose", checkedMode: true);

    [Fact]
    public void A_span_of_a_writer_dropped_without_dispose_keeps_its_block_and_never_reaches_a_later_structure() =>
        AdversarialChild.AssertClean("io-writer-span-after-finalizer");

    [Fact]
    public void In_checked_mode_a_span_of_a_writer_dropped_without_dispose_keeps_its_block_too() =>
        AdversarialChild.AssertClean("io-writer-span-after-finalizer", checkedMode: true);

    [Fact]
    public void In_checked_mode_a_pool_block_span_used_after_its_owner_s_dispose_reads_poison_and_its_write_is_reported() =>
        AdversarialChild.AssertClean("checked-pool-span-after-dispose", checkedMode: true);
}
