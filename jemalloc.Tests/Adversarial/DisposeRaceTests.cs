using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: a free, Dispose, finalizer or a structure's own Reset racing its use on other threads
/// (2+ threads, about 2 s each): Free/Dispose vs every bulk operation, Vector*, Parallel*, enumeration
/// and leases; the finalizer vs an open lease; a store's Reset vs Replace and scoped readers; an I/O
/// writer, pool or pool block disposed under a stream, pins or returns; a Parquet reader disposed under
/// a read. An operation completes on live memory or throws ObjectDisposedException; structures allocated
/// after a free (which reuse its memory) never change; the books balance; nothing crashes or hangs.
/// Families: buffers (<see cref="BufferDisposeRaceScenarios"/>), records
/// (<see cref="RecordDisposeRaceScenarios"/>), I/O (<see cref="IoDisposeRaceScenarios"/>), add-ons
/// (<see cref="AddOnDisposeRaceScenarios"/>); each scenario in its own child process.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class DisposeRaceTests
{
    // Buffers.

    [Theory]
    [InlineData(BufferDisposeRaceScenarios.RaceFreeVsOpsFixedBuffer)]
    [InlineData(BufferDisposeRaceScenarios.RaceDisposeVsOpsSafeArray)]
    [InlineData(BufferDisposeRaceScenarios.RaceDisposeVsOpsHugeArray)]
    public void Operations_racing_a_free_complete_or_throw_and_never_touch_reused_memory(string scenario) =>
        AdversarialChild.AssertClean(scenario);

    [Fact]
    public void Enumeration_racing_a_free_throws_and_never_yields_another_structure_data() =>
        AdversarialChild.AssertClean(BufferDisposeRaceScenarios.RaceFreeVsEnumeration);

    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [Fact]
    public void The_finalizer_never_frees_memory_under_an_open_lease() =>
        AdversarialChild.AssertClean(BufferDisposeRaceScenarios.RaceFinalizerVsLease);

    // Records: a store's own Reset.

    [Fact]
    public void Replace_on_a_second_thread_racing_Reset_succeeds_or_throws_as_documented() =>
        AdversarialChild.AssertClean(RecordDisposeRaceScenarios.RecordsReplaceVsReset);

    [Fact]
    public void Scoped_readers_racing_Reset_read_only_live_values_and_block_it_while_open() =>
        AdversarialChild.AssertClean(RecordDisposeRaceScenarios.RecordsScopedReadersVsReset);

    // I/O.

    [Fact]
    public void A_writer_disposed_while_a_stream_works_on_it_completes_or_throws_ObjectDisposedException_and_leaks_nothing() =>
        AdversarialChild.AssertClean(IoDisposeRaceScenarios.IoWriterDisposeVsStream);

    [Fact]
    public void Pool_pins_racing_their_owner_s_dispose_throw_or_hold_the_block_and_the_books_balance() =>
        AdversarialChild.AssertClean(IoDisposeRaceScenarios.IoPoolPinVsDispose);

    [Fact]
    public void A_pool_disposed_while_threads_return_and_rent_frees_every_kept_block_once_and_refuses_later_rents() =>
        AdversarialChild.AssertClean(IoDisposeRaceScenarios.IoPoolDisposeVsReturns);

    [Fact]
    public void Pool_pins_direct_unpins_disposes_and_arena_resets_racing_end_no_pin_but_their_own_and_leave_balanced_books() =>
        AdversarialChild.AssertClean(IoDisposeRaceScenarios.IoPoolPinsVsDirectUnpinsDisposeAndReset);

    [Fact]
    public void Dropped_pool_owners_finalized_while_the_pool_is_disposed_are_each_freed_once() =>
        AdversarialChild.AssertClean(IoDisposeRaceScenarios.IoPoolFinalizersVsPoolDispose);

    // Add-ons, with and without checked mode.

    [Theory]
    [Trait(EmulatedSubset.Name, EmulatedSubset.Value)]
    [InlineData(false)]
    [InlineData(true)]
    public void A_Parquet_reader_disposed_under_a_read_refuses_and_never_crashes(bool checkedMode) =>
        AdversarialChild.AssertClean(AddOnDisposeRaceScenarios.ReaderDisposedUnderRead, checkedMode);
}
