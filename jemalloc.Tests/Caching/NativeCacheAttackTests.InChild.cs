using jemalloc.Tests.Adversarial;
using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Caching;

/// <summary>
/// The NativeCache attacks where a crash of the process is the risk, each in its own child process
/// (<see cref="NativeCacheAttackInChildScenarios"/>), in checked mode and without: the child must run to
/// its end with no failure.
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class NativeCacheAttackInChildTests
{
    [Theory]
    [InlineData(NativeCacheAttackInChildScenarios.LeaseOfAnExitedThread, false)]
    [InlineData(NativeCacheAttackInChildScenarios.LeaseOfAnExitedThread, true)]
    [InlineData(NativeCacheAttackInChildScenarios.FactoryThreadFailsMidWrite, false)]
    [InlineData(NativeCacheAttackInChildScenarios.FactoryThreadFailsMidWrite, true)]
    [InlineData(NativeCacheAttackInChildScenarios.ProcessExitsMidWrite, false)]
    [InlineData(NativeCacheAttackInChildScenarios.ProcessExitsMidWrite, true)]
    [InlineData(NativeCacheAttackInChildScenarios.DisposeRacesEverything, false)]
    [InlineData(NativeCacheAttackInChildScenarios.DisposeRacesEverything, true)]
    [InlineData(NativeCacheAttackInChildScenarios.ClearRacesLeases, false)]
    [InlineData(NativeCacheAttackInChildScenarios.ClearRacesLeases, true)]
    public void The_cache_attacked_in_a_child_process_runs_to_its_end_without_a_failure(string scenario, bool checkedMode) =>
        AdversarialChild.AssertClean(scenario, checkedMode);
}
