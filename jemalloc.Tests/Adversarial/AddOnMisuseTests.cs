using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The Parquet and Arrow add-ons attacked through their public API, each class of failure in its own
/// process (<see cref="AddOnScenarios"/>), with and without checked mode: the library's holds are its
/// own, an arena reset never frees Arrow buffers in use, a reader disposed under a read refuses, a
/// forged footer is an error. One scenario per class also runs under the emulators.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class AddOnMisuseTests
{
    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_users_extra_Release_never_ends_an_Arrow_views_hold(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.ViewHoldVsExtraRelease, checkedMode);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_users_extra_Release_never_ends_a_C_Data_Interface_exports_hold(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.ExportHoldVsExtraRelease, checkedMode);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Unpin_and_a_pins_handle_disposed_twice_never_end_another_partys_pin(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.PinVsUnpinAndDoubleDispose, checkedMode);

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void An_arena_reset_under_arrays_of_its_Arrow_allocator_is_refused(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.ArenaResetUnderArrowArrays, checkedMode);

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_Parquet_reader_disposed_under_a_read_refuses_and_never_crashes(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.ReaderDisposedUnderRead, checkedMode);

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_footer_declaring_fewer_rows_than_its_pages_hold_is_InvalidDataException(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnScenarios.ForgedFooterFewerRows, checkedMode);
}
