namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The record types attacked again (see RecordRoundTwoScenarios): torn stored strings, keys whose
/// callbacks re-enter or throw, a long batch lookup against a writer, caller spans changed meanwhile.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class RecordRoundTwoTests
{
    [Fact]
    public void Every_mix_of_two_stored_strings_words_reads_as_one_of_them_or_throws_and_Replace_of_it_writes_nothing() =>
        AdversarialChild.AssertClean("records2-torn-string-words");

    [Fact]
    public void Racy_copies_of_a_Customer_in_a_HugeArray_read_one_of_the_two_names_or_throw() =>
        AdversarialChild.AssertClean("records2-torn-customer-hugearray");

    [Fact]
    public void Racy_copies_of_a_Customer_in_an_array_read_one_of_the_two_names_or_throw() =>
        AdversarialChild.AssertClean("records2-torn-customer-array");

    [Fact]
    public void Disposing_a_read_scope_mixed_from_two_stores_throws_and_closes_neither() =>
        AdversarialChild.AssertClean("records2-torn-read-scope");

    [Fact]
    public void Add_of_UTF8_bytes_changed_by_another_thread_stores_valid_UTF8_or_throws() =>
        AdversarialChild.AssertClean("records2-add-utf8-changed-meanwhile");

    [Fact]
    public void Add_of_characters_changed_by_another_thread_stores_only_what_it_encoded_or_throws() =>
        AdversarialChild.AssertClean("records2-add-chars-changed-meanwhile");

    [Fact]
    public void Add_of_short_text_changed_by_another_thread_stores_only_what_it_encoded() =>
        AdversarialChild.AssertClean("records2-add-short-chars-changed-meanwhile");

    [Fact]
    public void TryGetValues_of_keys_changed_by_another_thread_finds_one_of_each_keys_values() =>
        AdversarialChild.AssertClean("records2-batch-keys-changed-meanwhile");

    [Fact]
    public void TryGetValues_of_4M_keys_finishes_while_a_writer_sets_a_value_every_10_ms() =>
        AdversarialChild.AssertClean("records2-batch-lookup-vs-writer");

    [Fact]
    public void A_key_callback_that_throws_leaves_the_index_exactly_as_before() =>
        AdversarialChild.AssertClean("records2-throwing-callbacks");

    [Fact]
    public void A_writer_refused_as_a_second_writer_leaves_its_thread_free_to_use_the_index() =>
        AdversarialChild.AssertClean("records2-refused-writer-then-lookup");

    [Theory]
    [InlineData("dispose", "equals")]
    [InlineData("dispose", "hash")]
    [InlineData("add", "equals")]
    [InlineData("add", "hash")]
    [InlineData("remove", "equals")]
    [InlineData("remove", "hash")]
    [InlineData("lookup", "equals")]
    [InlineData("lookup", "hash")]
    public void A_key_callback_that_reenters_the_index_is_refused_and_nothing_hangs(string inner, string callback) =>
        AdversarialChild.AssertClean($"records2-reentrant-{inner}-in-{callback}");
}
