namespace jemalloc.AddOns.Tests;

/// <summary>
/// The base of the add-ons' test classes whose every test must leave the allocation ledger as it found it: the live
/// count and bytes are recorded before each test and compared after it. The classes run alone
/// (<see cref="LedgerBalancedAlone"/>), so no other test's allocations are counted. One source for
/// both add-ons' test projects (linked from common/Tests/).
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public abstract class LedgerBalanced : IDisposable
{
    private readonly long _liveCount = AllocationLedger.LiveCount;
    private readonly long _liveBytes = AllocationLedger.LiveBytes;

    public virtual void Dispose()
    {
        Assert.True(
            AllocationLedger.LiveCount == _liveCount && AllocationLedger.LiveBytes == _liveBytes,
            $"The ledger holds {AllocationLedger.LiveCount - _liveCount} allocation(s) and {AllocationLedger.LiveBytes - _liveBytes:N0} byte(s) more than before the test.");
        GC.SuppressFinalize(this);
    }
}

[CollectionDefinition(Name, DisableParallelization = true)]
public static class LedgerBalancedAlone
{
    public const string Name = "Ledger balanced, alone";
}
