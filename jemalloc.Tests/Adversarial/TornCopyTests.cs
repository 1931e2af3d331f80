using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: torn copies, data another thread changes while it is copied or read. Racy copies of
/// a FixedBuffer variable, of the README's <c>Customer</c> and of a read scope are one whole value or
/// throw; every mix of two stored strings' words reads as one of them or throws; caller-owned input (an
/// index list, UTF-8 bytes, characters, batch keys) changed while the library reads it gives the right
/// elements, valid UTF-8 or one of each key's values, or throws. Families: buffers
/// (<see cref="BufferTornCopyScenarios"/>), records (<see cref="RecordTornCopyScenarios"/>); each
/// scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class TornCopyTests
{
    // Buffers.

    [Fact]
    public void A_racy_copy_of_a_FixedBuffer_is_always_one_whole_buffer() =>
        AdversarialChild.AssertClean(BufferTornCopyScenarios.RaceFixedBufferCopies);

    [Fact]
    public void Gather_racing_a_thread_that_flips_an_index_copies_the_right_elements_or_throws() =>
        AdversarialChild.AssertClean(BufferTornCopyScenarios.BuffersGatherVsIndexFlips);

    [Fact]
    public void FixedUtf8String_from_bytes_another_thread_changes_holds_valid_UTF8_or_throws() =>
        AdversarialChild.AssertClean(BufferTornCopyScenarios.BuffersFixedUtf8BytesVsFlips);

    // Records: torn values.

    [Fact]
    public void Every_mix_of_two_stored_strings_words_reads_as_one_of_them_or_throws_and_Replace_of_it_writes_nothing() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsTornStringWords);

    [Fact]
    public void Racy_copies_of_a_Customer_in_a_HugeArray_read_one_of_the_two_names_or_throw() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsTornCustomerHugeArray);

    [Fact]
    public void Racy_copies_of_a_Customer_in_an_array_read_one_of_the_two_names_or_throw() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsTornCustomerArray);

    [Fact]
    public void Disposing_a_read_scope_mixed_from_two_stores_throws_and_closes_neither() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsTornReadScope);

    // Records: caller input changed meanwhile.

    [Fact]
    public void Add_of_UTF8_bytes_changed_by_another_thread_stores_valid_UTF8_or_throws() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsAddUtf8ChangedMeanwhile);

    [Fact]
    public void Add_of_characters_changed_by_another_thread_stores_only_what_it_encoded_or_throws() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsAddCharsChangedMeanwhile);

    [Fact]
    public void Add_of_short_text_changed_by_another_thread_stores_only_what_it_encoded() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsAddShortCharsChangedMeanwhile);

    [Fact]
    public void TryGetValues_of_keys_changed_by_another_thread_finds_one_of_each_keys_values() =>
        AdversarialChild.AssertClean(RecordTornCopyScenarios.RecordsBatchKeysChangedMeanwhile);
}
