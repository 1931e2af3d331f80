namespace jemalloc.Tests.Adversarial;

/// <summary>The one-writer I/O types used by two writers at once, each in a child process (see IoRoundTwoScenarios there).</summary>
[Collection(AdversarialScenarios.Name)]
public sealed class IoRoundTwoScenarioTests
{
    [Fact]
    public void Two_threads_writing_one_NativeBufferWriter_never_count_past_its_block_or_are_refused() =>
        AdversarialChild.AssertClean("io2-writer-two-writers");

    [Fact]
    public void In_checked_mode_two_threads_writing_one_NativeBufferWriter_are_refused_the_same_way() =>
        AdversarialChild.AssertClean("io2-writer-two-writers", checkedMode: true);

    [Fact]
    public void A_NativeBufferWriter_handed_over_or_cleared_while_another_thread_writes_never_shows_a_span_past_its_block() =>
        AdversarialChild.AssertClean("io2-writer-detach-and-clear-vs-writer");

    [Fact]
    public void Two_threads_using_one_growable_NativeMemoryStream_keep_its_length_inside_its_block_or_are_refused() =>
        AdversarialChild.AssertClean("io2-stream-two-writers-growable");

    [Fact]
    public void Two_threads_using_one_NativeMemoryStream_over_an_array_keep_its_length_inside_the_array_or_are_refused() =>
        AdversarialChild.AssertClean("io2-stream-two-writers-fixed");

    [Fact]
    public void A_NativeMemoryStream_and_its_writer_used_directly_on_another_thread_stay_inside_the_block() =>
        AdversarialChild.AssertClean("io2-stream-and-its-writer-used-directly");
}
