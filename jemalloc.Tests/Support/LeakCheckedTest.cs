namespace jemalloc.Tests.Support;

/// <summary>
/// The base of test classes that must leave nothing behind: xunit makes one instance per test, so
/// the ledger's live count and bytes and jemalloc's allocated bytes are recorded before each test and
/// checked after it; a difference fails the test. (A class fixture could not do this: xunit's VSTest
/// runner does not report a fixture's cleanup failure as a failed test.) Derived classes belong to the
/// <see cref="LeakChecked"/> collection, which runs alone.
/// </summary>
/// <remarks>
/// The ledger is checked first, before any garbage collection: a <see cref="SafeArray{T}"/> or
/// <see cref="HugeArray{T}"/> the test forgot to dispose is still live then, so the forgotten
/// <c>Dispose</c> fails the test instead of being hidden by the finalizer. Only afterwards is garbage
/// collected and jemalloc's statistics given time to settle (thread caches of ended threads). A test
/// that leaks on purpose, to test the finalizer, says so by calling <see cref="LeavesLeaksToTheFinalizer"/>.
/// </remarks>
public abstract class LeakCheckedTest : IDisposable
{
    private readonly long _liveCount;
    private readonly long _liveBytes;
    private readonly long _allocatedBytes;
    private bool _finalizerMayFree;

    /// <summary>Records the starting point.</summary>
    protected LeakCheckedTest()
    {
        FinalizerThreadWarmUp.EnsureDone();
        // What earlier tests left to finalizers (those that opted out, or failed) is not this test's.
        CollectGarbage();
        _liveCount = AllocationLedger.LiveCount;
        _liveBytes = AllocationLedger.LiveBytes;
        _allocatedBytes = NativeStats.AllocatedBytes();
    }

    /// <summary>
    /// Declares that the running test leaks structures on purpose and relies on their finalizers to
    /// free them: the ledger is then checked only after a garbage collection. Without this call a
    /// structure that is only freed by its finalizer fails the test.
    /// </summary>
    protected void LeavesLeaksToTheFinalizer() => _finalizerMayFree = true;

    /// <summary>Fails the test if it left live allocations or native memory behind.</summary>
    public void Dispose()
    {
        if (!_finalizerMayFree)
        {
            CheckLedger("before garbage collection (a structure not disposed, left to its finalizer?)");
        }

        CollectGarbage();
        CheckLedger(_finalizerMayFree ? "after garbage collection" : "after garbage collection, too");

        // Under wine jemalloc's allocated bytes also GROW by a few KiB to about 30 KiB, seconds late,
        // after memory was freed by the finalizer thread (not understood yet; natively and under
        // qemu such growth is a leak). There the ledger's balance above is the leak check;
        // jemalloc's is checked everywhere else.
        if (Wine.IsRunningUnder)
        {
            GC.SuppressFinalize(this);
            return;
        }

        long allocated = NativeStats.AllocatedBytes();
        // A thread that ended during the test frees its jemalloc thread cache as the native thread
        // exits, which can be a moment after Join returned: give that a little while to happen. Only
        // growth is a leak: a thread of a test in another collection, running in parallel, may end
        // meanwhile and flush its cache, which lowers the count without being this test's doing.
        for (int attempt = 0; attempt < 100 && allocated > _allocatedBytes; attempt++)
        {
            Thread.Sleep(20);
            allocated = NativeStats.AllocatedBytes();
        }

        if (allocated > _allocatedBytes)
        {
            throw new InvalidOperationException($"jemalloc had {_allocatedBytes:N0} bytes allocated before the test and {allocated:N0} after.");
        }

        GC.SuppressFinalize(this);
    }

    private void CheckLedger(string when)
    {
        long liveCount = AllocationLedger.LiveCount;
        long liveBytes = AllocationLedger.LiveBytes;
        if (liveCount != _liveCount || liveBytes != _liveBytes)
        {
            string leaks = string.Join(Environment.NewLine, AllocationLedger.Snapshot());
            throw new InvalidOperationException(
                $"The ledger had {_liveCount} live allocations ({_liveBytes:N0} bytes) before the test and {liveCount} ({liveBytes:N0} bytes) {when}:{Environment.NewLine}{leaks}");
        }
    }

    private static void CollectGarbage()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        // In checked mode freed blocks wait in the quarantine, still allocated in jemalloc's books:
        // they are freed, not leaked, so the count before and after is taken with it empty.
        AllocationLedger.FlushQuarantine();
    }
}
