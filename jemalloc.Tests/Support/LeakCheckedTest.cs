namespace jemalloc.Tests.Support;

/// <summary>
/// The base of test classes that must leave nothing behind: xunit makes one instance per test, so
/// the ledger's live count and jemalloc's allocated bytes are recorded before each test and checked
/// after it; a difference fails the test. (A class fixture could not do this: xunit's VSTest runner
/// does not report a fixture's cleanup failure as a failed test.) Derived classes belong to the
/// <see cref="LeakChecked"/> collection, which runs alone.
/// </summary>
public abstract class LeakCheckedTest : IDisposable
{
    private readonly long _liveCount;
    private readonly long _allocatedBytes;

    /// <summary>Records the starting point.</summary>
    protected LeakCheckedTest()
    {
        CollectGarbage();
        _liveCount = AllocationLedger.LiveCount;
        _allocatedBytes = NativeStats.AllocatedBytes();
    }

    /// <summary>Fails the test if it left live allocations or native memory behind.</summary>
    public void Dispose()
    {
        CollectGarbage();
        long liveCount = AllocationLedger.LiveCount;
        if (liveCount != _liveCount)
        {
            string leaks = string.Join(Environment.NewLine, AllocationLedger.Snapshot());
            throw new InvalidOperationException($"The ledger had {_liveCount} live allocations before the test and {liveCount} after:{Environment.NewLine}{leaks}");
        }

        long allocated = NativeStats.AllocatedBytes();
        // A thread that ended during the test frees its jemalloc thread cache as the native thread
        // exits, which can be a moment after Join returned: give that a little while to happen.
        for (int attempt = 0; attempt < 100 && allocated != _allocatedBytes; attempt++)
        {
            Thread.Sleep(20);
            allocated = NativeStats.AllocatedBytes();
        }

        if (allocated != _allocatedBytes)
        {
            throw new InvalidOperationException($"jemalloc had {_allocatedBytes:N0} bytes allocated before the test and {allocated:N0} after.");
        }

        GC.SuppressFinalize(this);
    }

    private static void CollectGarbage()
    {
        // Leaked SafeHandles free their memory in finalizers: let them run so the numbers settle.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }
}
