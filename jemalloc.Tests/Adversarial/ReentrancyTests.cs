using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: re-entrancy, user code the library calls that calls back into it or throws. Keys
/// whose Equals or GetHashCode re-enter a NativeHashIndex (dispose, add, remove, look up) are refused
/// and nothing hangs; keys whose callbacks throw leave the index exactly as before. Family: records
/// (<see cref="RecordReentrancyScenarios"/>); each scenario in its own child process. (The I/O streams'
/// re-entrant destinations are in-process tests: <see cref="IoMisuseAttackTests"/>.)
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class ReentrancyTests
{
    [Fact]
    public void A_key_callback_that_throws_leaves_the_index_exactly_as_before() =>
        AdversarialChild.AssertClean(RecordReentrancyScenarios.RecordsThrowingCallbacks);

    [Theory]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantDisposeInEquals)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantDisposeInHash)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantAddInEquals)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantAddInHash)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantRemoveInEquals)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantRemoveInHash)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantLookupInEquals)]
    [InlineData(RecordReentrancyScenarios.RecordsReentrantLookupInHash)]
    public void A_key_callback_that_reenters_the_index_is_refused_and_nothing_hangs(string scenario) =>
        AdversarialChild.AssertClean(scenario);
}
