namespace jemalloc.Tests.Support;

/// <summary>Runs the finalizers of what the tests dropped.</summary>
internal static class Finalization
{
    /// <summary>
    /// Three full collections, each followed by a wait for the finalizers: enough for what a finalizer
    /// resurrects and drops again, and for finalizers that free what other finalizers left.
    /// </summary>
    internal static void CollectAndFinalize()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }
}
