namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Result checks shared by the micro-benchmarks, whose operations are too small to return a result
/// worth checking on their own: an allocate-and-free operation must give back everything it took
/// (jemalloc's <c>stats.allocated</c> is the same after many operations as before).
/// </summary>
public static class MicroChecks
{
    /// <summary>How many times <see cref="FreesEverything"/> runs the operation.</summary>
    public const int Repetitions = 1000;

    /// <summary>
    /// Runs <paramref name="operation"/> <see cref="Repetitions"/> times and checks that the bytes
    /// jemalloc counts as allocated (exact: this thread's cache flushed) are the same afterwards.
    /// </summary>
    /// <exception cref="BenchmarkVerificationException">The operation kept memory.</exception>
    public static void FreesEverything(string benchmark, Action operation)
    {
        ArgumentNullException.ThrowIfNull(operation);
        ulong before = JemControl.LiveBytes();
        for (int i = 0; i < Repetitions; i++)
        {
            operation();
        }

        ulong after = BrokenResultSwitch.Corrupt(JemControl.LiveBytes());
        ResultChecks.Equal(benchmark, before, after, $"bytes allocated by jemalloc (stats.allocated) after {Repetitions} operations");
    }
}
