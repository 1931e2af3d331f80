using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: concurrent use of the one-writer types, the writer's contract broken or stretched: two
/// threads writing one <see cref="NativeBufferWriter{T}"/> or one <see cref="NativeMemoryStream"/>, a
/// writer's pins ended on another thread, readers of a NativeHashIndex racing its writer, a second
/// writer of the index. The counts stay inside the block, a second writer is refused with the
/// documented exception, readers see only whole states and finish; nothing hangs. Families: records
/// (<see cref="RecordConcurrentUseScenarios"/>), I/O (<see cref="IoConcurrentUseScenarios"/>); each
/// scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class ConcurrentUseTests
{
    // Records.

    [Fact]
    public void Index_readers_racing_growth_removal_and_Dispose_see_only_whole_states() =>
        AdversarialChild.AssertClean(RecordConcurrentUseScenarios.RecordsIndexReadersVsWriter);

    [Fact]
    public void TryGetValues_of_4M_keys_finishes_while_a_writer_sets_a_value_every_10_ms() =>
        AdversarialChild.AssertClean(RecordConcurrentUseScenarios.RecordsBatchLookupVsWriter);

    [Fact]
    public void A_writer_refused_as_a_second_writer_leaves_its_thread_free_to_use_the_index() =>
        AdversarialChild.AssertClean(RecordConcurrentUseScenarios.RecordsRefusedWriterThenLookup);

    // I/O.

    [Fact]
    public void Two_threads_writing_one_NativeBufferWriter_never_count_past_its_block_or_are_refused() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoWriterTwoWriters);

    [Fact]
    public void In_checked_mode_two_threads_writing_one_NativeBufferWriter_are_refused_the_same_way() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoWriterTwoWriters, checkedMode: true);

    [Fact]
    public void A_NativeBufferWriter_handed_over_or_cleared_while_another_thread_writes_never_shows_a_span_past_its_block() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoWriterDetachAndClearVsWriter);

    [Fact]
    public void Two_threads_using_one_growable_NativeMemoryStream_keep_its_length_inside_its_block_or_are_refused() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoStreamTwoWritersGrowable);

    [Fact]
    public void Two_threads_using_one_NativeMemoryStream_over_an_array_keep_its_length_inside_the_array_or_are_refused() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoStreamTwoWritersFixed);

    [Fact]
    public void A_NativeMemoryStream_and_its_writer_used_directly_on_another_thread_stay_inside_the_block() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoStreamAndItsWriterUsedDirectly);

    [Fact]
    public void A_writer_whose_pins_end_on_another_thread_refuses_growth_while_pinned_and_frees_its_block_once_they_ended() =>
        AdversarialChild.AssertClean(IoConcurrentUseScenarios.IoWriterPinsEndedOnAnotherThread);
}
