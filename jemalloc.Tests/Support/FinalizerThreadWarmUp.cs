namespace jemalloc.Tests.Support;

/// <summary>
/// Makes the finalizer thread use jemalloc once, before any leak check takes its starting point.
/// jemalloc gives a thread its cache on the thread's first allocation, and counts the cache's memory
/// as allocated; the finalizer thread's first use is whichever finalizer first frees native memory.
/// Without this, the test in which that happens (a different one depending on which tests run and in
/// what order) would see the cache as its own leak: 64 KiB with the 64 KiB-page arm64 build.
/// </summary>
internal sealed unsafe class FinalizerThreadWarmUp
{
    private static int s_done;

    private FinalizerThreadWarmUp()
    {
    }

    ~FinalizerThreadWarmUp() => Jem.Free(Jem.Malloc(16));

    /// <summary>Runs a finalizer that allocates and frees through jemalloc, once per process, and waits for it.</summary>
    internal static void EnsureDone()
    {
        if (Interlocked.Exchange(ref s_done, 1) == 0)
        {
            Drop();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void Drop() => _ = new FinalizerThreadWarmUp();
}
