namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The array-like structures attacked a second time (see BufferRoundTwoScenarios): Gather's index
/// list changed by another thread while it runs, an acquired array whose last reference is dropped,
/// and FixedUtf8String lengths that overflow an int.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class BufferRoundTwoTests
{
    // A text of 1.4 GB is made and read several times: on a busy 2-core machine that takes up to a minute.
    private static readonly TimeSpan HugeTextTimeout = TimeSpan.FromMinutes(3);

    [Fact]
    public void Gather_racing_a_thread_that_flips_an_index_copies_the_right_elements_or_throws() =>
        AdversarialChild.AssertClean("buffers2-gather-vs-index-flips");

    [Fact]
    public void FixedUtf8String_from_bytes_another_thread_changes_holds_valid_UTF8_or_throws() =>
        AdversarialChild.AssertClean("buffers2-fixedutf8-bytes-vs-flips");

    [Theory]
    [InlineData("buffers2-acquire-keeps-memory-safearray")]
    [InlineData("buffers2-acquire-keeps-memory-hugearray")]
    public void An_acquired_array_whose_last_reference_is_dropped_keeps_its_memory_until_released(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Theory]
    [InlineData("buffers2-fixedutf8-huge-string-match")]
    [InlineData("buffers2-fixedutf8-huge-string-mismatch")]
    public void FixedUtf8String_compares_right_with_a_text_of_more_than_a_third_of_int_MaxValue_characters(string scenario) =>
        AdversarialChild.AssertClean(scenario, timeout: HugeTextTimeout);

    [Fact]
    public void FixedUtf8String_refuses_text_of_int_MaxValue_UTF8_bytes_naming_the_argument() =>
        AdversarialChild.AssertClean("buffers2-fixedutf8-int-max-bytes", timeout: HugeTextTimeout);
}
