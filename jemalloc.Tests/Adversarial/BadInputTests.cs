using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: bad input and absurd sizes. Absurd sizes (0, negative, sizeof(T)*n overflow, beyond
/// any address space), bad indexes and ranges on every member and on leases, bad strings, bad
/// AllocationOptions flags, lengths that overflow an int, a forged Parquet footer, dangerous or
/// disguised mallctl keys: each is a conventional .NET exception that leaves the structure unchanged and
/// leaks nothing. Too big is an exception: more than physical memory + swap throws OutOfMemoryException
/// at once (the child's watchdog kills it, failing the test, if it starts zero-filling instead; the
/// runner's timeout fails it if it hangs). Families: buffers (<see cref="BufferBadInputScenarios"/>),
/// arenas (<see cref="ArenaBadInputScenarios"/>), records (<see cref="RecordBadInputScenarios"/>),
/// add-ons (<see cref="AddOnBadInputScenarios"/>), raw mallctl (<see cref="MallctlBadInputScenarios"/>);
/// each scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class BadInputTests
{
    // A text of 1.4 GB is made and read several times: on a busy 2-core machine that takes up to a minute.
    private static readonly TimeSpan HugeTextTimeout = TimeSpan.FromMinutes(3);

    // Buffers.

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData(BufferBadInputScenarios.BadSizes)]
    [InlineData(BufferBadInputScenarios.BadIndexes)]
    [InlineData(BufferBadInputScenarios.BadRanges)]
    [InlineData(BufferBadInputScenarios.BadStrings)]
    public void Bad_arguments_throw_and_leak_nothing(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData(BufferBadInputScenarios.TooBigSafeArray)]
    [InlineData(BufferBadInputScenarios.TooBigHugeArray)]
    [InlineData(BufferBadInputScenarios.TooBigHugeArrayJustOver)]
    [InlineData(BufferBadInputScenarios.TooBigWithValue)]
    public void A_structure_beyond_the_machine_throws_OutOfMemoryException(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Theory]
    [InlineData(BufferBadInputScenarios.BuffersFixedUtf8HugeStringMatch)]
    [InlineData(BufferBadInputScenarios.BuffersFixedUtf8HugeStringMismatch)]
    public void FixedUtf8String_compares_right_with_a_text_of_more_than_a_third_of_int_MaxValue_characters(string scenario) =>
        AdversarialChild.AssertClean(scenario, timeout: HugeTextTimeout);

    [Fact]
    public void FixedUtf8String_refuses_text_of_int_MaxValue_UTF8_bytes_naming_the_argument() =>
        AdversarialChild.AssertClean(BufferBadInputScenarios.BuffersFixedUtf8IntMaxBytes, timeout: HugeTextTimeout);

    // Arenas.

    /// <summary>
    /// Flags naming a thread cache or arena that does not exist, raw garbage flags, a destroyed
    /// arena's flags: refused (ArgumentException, ObjectDisposedException) before they reach jemalloc.
    /// </summary>
    [Theory]
    [InlineData(ArenaBadInputScenarios.BadFlagsThreadCache)]
    [InlineData(ArenaBadInputScenarios.BadFlagsArena)]
    [InlineData(ArenaBadInputScenarios.BadFlagsRaw)]
    [InlineData(ArenaBadInputScenarios.BadFlagsDestroyedArena)]
    [InlineData(ArenaBadInputScenarios.BadFlagsUnownedArena)]
    public void Bad_allocation_flags_are_refused_not_passed_to_jemalloc(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    // Records.

    [Fact]
    public void A_stored_string_compares_right_with_a_text_longer_than_a_third_of_int_MaxValue() =>
        AdversarialChild.AssertClean(RecordBadInputScenarios.RecordsHugeStringCompare);

    [Fact]
    public void An_index_too_big_for_the_machine_throws_OutOfMemoryException() =>
        AdversarialChild.AssertClean(RecordBadInputScenarios.RecordsIndexTooBig);

    // Add-ons, with and without checked mode.

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_footer_declaring_fewer_rows_than_its_pages_hold_is_InvalidDataException(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnBadInputScenarios.ForgedFooterFewerRows, checkedMode);

    // Raw mallctl, through MallctlKeys and Jem.*Mallctl: a clear exception (MallctlException or
    // another conventional type, printed by the child), never a crash.

    [Theory]
    [InlineData(MallctlBadInputScenarios.MallctlArenasCreateSet)]
    [InlineData(MallctlBadInputScenarios.MallctlArenasCreateCommand)]
    [InlineData(MallctlBadInputScenarios.MallctlTcacheFlush)]
    [InlineData(MallctlBadInputScenarios.MallctlTcacheDestroy)]
    [InlineData(MallctlBadInputScenarios.MallctlHooksRemove)]
    [InlineData(MallctlBadInputScenarios.MallctlExtentHooks)]
    [InlineData(MallctlBadInputScenarios.MallctlTcacheCreateCommand)]
    [InlineData(MallctlBadInputScenarios.MallctlArenasLookupRead)]
    [InlineData(MallctlBadInputScenarios.MallctlArenasLookupBadPointer)]
    public void Keys_the_raw_api_cannot_serve_are_refused(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Theory]
    [InlineData(MallctlBadInputScenarios.MallctlDisguisedIndexSuffix)]
    [InlineData(MallctlBadInputScenarios.MallctlDisguisedIndexSign)]
    [InlineData(MallctlBadInputScenarios.MallctlDisguisedIndexSpace)]
    [InlineData(MallctlBadInputScenarios.MallctlDisguisedIndexNul)]
    public void A_name_jemalloc_reads_as_another_key_is_refused(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void Bad_keys_and_types_throw_MallctlException() =>
        AdversarialChild.AssertClean(MallctlBadInputScenarios.MallctlBadKeys);
}
