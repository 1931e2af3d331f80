using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: lifetime misuse, on one thread. Stale copies after Free, Dispose and an arena's
/// Reset or Dispose: every public member of every structure, through any copy (including one stored in
/// native memory) and on other threads, throws ObjectDisposedException; a structure that reuses the
/// memory or slot is untouched, however often the slot is reused. Double free, over-release, free while
/// acquired or leased, lease copies disposed twice, default leases and structures, leases used after
/// Dispose, two parties on one structure, count limits: each throws the documented exception and leaves
/// the structure usable. Holds the library keeps (an acquired array, a writer's block, an Arrow view, an
/// export, a pin) are never ended by a dropped reference or by another party's Release or Unpin.
/// Families: buffers (<see cref="BufferLifetimeMisuseScenarios"/>), arenas
/// (<see cref="ArenaLifetimeMisuseScenarios"/>), I/O (<see cref="IoLifetimeMisuseScenarios"/>), add-ons
/// (<see cref="AddOnLifetimeMisuseScenarios"/>); each scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class LifetimeMisuseTests
{
    // Buffers and arenas: stale copies.

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Theory]
    [InlineData(BufferLifetimeMisuseScenarios.StaleFixedBuffer)]
    [InlineData(BufferLifetimeMisuseScenarios.StaleUtf8String)]
    [InlineData(BufferLifetimeMisuseScenarios.StaleSafeArray)]
    [InlineData(BufferLifetimeMisuseScenarios.StaleHugeArray)]
    [InlineData(ArenaLifetimeMisuseScenarios.StaleArenaReset)]
    [InlineData(ArenaLifetimeMisuseScenarios.StaleArenaDispose)]
    [InlineData(ArenaLifetimeMisuseScenarios.StaleArenaOptions)]
    public void Every_member_of_a_stale_structure_throws_ObjectDisposedException(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    /// <summary>
    /// Over two million reuses of a slot. The wrap of the 32-bit generation (2^31 reuses) cannot be
    /// reached through the public API in a test: no public member shows a slot or its generation, and
    /// 2^31 cycles take minutes.
    /// </summary>
    [Fact]
    public void A_stale_copy_never_becomes_valid_again_over_many_reuses() =>
        AdversarialChild.AssertClean(BufferLifetimeMisuseScenarios.GenerationReuse);

    [Fact]
    public void Without_checked_mode_a_span_kept_past_its_lease_does_not_crash()
    {
        // Documented as the user's responsibility; the output says whether it reached the next buffer.
        string output = AdversarialChild.AssertClean(BufferLifetimeMisuseScenarios.UncheckedStaleSpan);
        Assert.Contains(AdversarialChild.Lines(output), line => line.StartsWith("INFO unchecked:", StringComparison.Ordinal));
    }

    // Buffers: misuse of the lifetime calls.

    [Theory]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseDoubleFree)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseOverRelease)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseFreeWhileAcquired)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseFreeWhileLeased)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseLeaseCopies)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseDefaultValues)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseCountLimits)]
    [InlineData(BufferLifetimeMisuseScenarios.MisuseChunksAfterLeaseDispose)]
    public void Misuse_throws_and_leaves_the_structure_usable(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void Per_holder_leases_cannot_be_cancelled_by_another_party()
    {
        string output = AdversarialChild.AssertClean(BufferLifetimeMisuseScenarios.MisuseTwoParties);
        // Acquire/Release is one shared count by design (the 2018 API); the output says what it gives.
        Assert.Contains(AdversarialChild.Lines(output), line => line.StartsWith("INFO Acquire/Release", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(BufferLifetimeMisuseScenarios.BuffersAcquireKeepsMemorySafeArray)]
    [InlineData(BufferLifetimeMisuseScenarios.BuffersAcquireKeepsMemoryHugeArray)]
    public void An_acquired_array_whose_last_reference_is_dropped_keeps_its_memory_until_released(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    // I/O: a writer dropped without Dispose.

    [Fact]
    public void A_span_of_a_writer_dropped_without_dispose_keeps_its_block_and_never_reaches_a_later_structure() =>
        AdversarialChild.AssertClean(IoLifetimeMisuseScenarios.IoWriterSpanAfterFinalizer);

    [Fact]
    public void In_checked_mode_a_span_of_a_writer_dropped_without_dispose_keeps_its_block_too() =>
        AdversarialChild.AssertClean(IoLifetimeMisuseScenarios.IoWriterSpanAfterFinalizer, checkedMode: true);

    // Add-ons: the library's holds, with and without checked mode.

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_users_extra_Release_never_ends_an_Arrow_views_hold(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnLifetimeMisuseScenarios.ViewHoldVsExtraRelease, checkedMode);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_users_extra_Release_never_ends_a_C_Data_Interface_exports_hold(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnLifetimeMisuseScenarios.ExportHoldVsExtraRelease, checkedMode);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Unpin_and_a_pins_handle_disposed_twice_never_end_another_partys_pin(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnLifetimeMisuseScenarios.PinVsUnpinAndDoubleDispose, checkedMode);
}
