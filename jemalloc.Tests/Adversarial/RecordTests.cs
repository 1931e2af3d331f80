namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The record types under attack (see RecordScenarios): huge comparisons, a second writer racing a
/// reset, index readers racing growth and Dispose, an index too big for the machine.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class RecordTests
{
    [Fact]
    public void A_stored_string_compares_right_with_a_text_longer_than_a_third_of_int_MaxValue() =>
        AdversarialChild.AssertClean("records-huge-string-compare");

    [Fact]
    public void Replace_on_a_second_thread_racing_Reset_succeeds_or_throws_as_documented() =>
        AdversarialChild.AssertClean("records-replace-vs-reset");

    [Fact]
    public void Scoped_readers_racing_Reset_read_only_live_values_and_block_it_while_open() =>
        AdversarialChild.AssertClean("records-scoped-readers-vs-reset");

    [Fact]
    public void Index_readers_racing_growth_removal_and_Dispose_see_only_whole_states() =>
        AdversarialChild.AssertClean("records-index-readers-vs-writer");

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void After_an_arena_reset_an_index_and_a_store_in_it_throw_ObjectDisposedException() =>
        AdversarialChild.AssertClean("records-arena-reset");

    [Fact]
    public void Reads_inside_a_read_scope_never_see_the_arena_reset_under_them_the_reset_is_refused_while_it_is_open() =>
        AdversarialChild.AssertClean("records-scope-vs-arena-reset");

    [Fact]
    public void In_checked_mode_reads_inside_a_read_scope_never_see_the_arena_reset_under_them() =>
        AdversarialChild.AssertClean("records-scope-vs-arena-reset", checkedMode: true);

    [Fact]
    public void An_index_too_big_for_the_machine_throws_OutOfMemoryException() =>
        AdversarialChild.AssertClean("records-index-too-big");
}
