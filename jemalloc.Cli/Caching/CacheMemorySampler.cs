using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Caching;

/// <summary>
/// Samples, every 100 ms while a side's server shape runs, the managed heap and, on the native side, the cache's
/// statistics (its own count of allocated bytes and jemalloc's count for its arenas), checking each against the budget.
/// </summary>
public sealed class CacheMemorySampler : IDisposable
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(100);
    private readonly Lock _lock = new();
    private readonly Timer _timer;
    private CacheSubject? _subject;

    /// <summary>Starts sampling.</summary>
    public CacheMemorySampler() => _timer = new Timer(_ => Sample(), null, TimeSpan.Zero, Interval);

    /// <summary>The largest managed heap sampled.</summary>
    public long PeakManagedBytes { get; private set; }

    /// <summary>The native cache's largest allocated bytes sampled.</summary>
    public long PeakNativeBytes { get; private set; }

    /// <summary>The largest of jemalloc's allocated bytes in the cache's arenas sampled.</summary>
    public long PeakArenaBytes { get; private set; }

    /// <summary>Samples of the native cache taken.</summary>
    public int Samples { get; private set; }

    /// <summary>Samples in which the cache's allocated bytes or its arenas' passed its budget.</summary>
    public int SamplesOverBudget { get; private set; }

    /// <summary>Samples <paramref name="subject"/> from now until the result is disposed, which must be before the cache is freed.</summary>
    /// <returns>What stops the sampling of the cache: once disposed, no sample of it is under way or will start.</returns>
    public IDisposable Watching(CacheSubject subject)
    {
        ArgumentNullException.ThrowIfNull(subject);
        Watch(subject);
        return new Unwatch(this);
    }

    private void Watch(CacheSubject? subject)
    {
        lock (_lock)
        {
            _subject = subject;
        }
    }

    /// <summary>Takes a sample now.</summary>
    public void Sample()
    {
        lock (_lock)
        {
            PeakManagedBytes = Math.Max(PeakManagedBytes, GC.GetTotalMemory(forceFullCollection: false));
            if (_subject?.NativeStatistics() is not NativeCacheStatistics statistics)
            {
                return;
            }

            Samples++;
            PeakNativeBytes = Math.Max(PeakNativeBytes, statistics.AllocatedBytes);
            PeakArenaBytes = Math.Max(PeakArenaBytes, statistics.ArenaAllocatedBytes);
            if (statistics.AllocatedBytes > statistics.BudgetBytes || statistics.ArenaAllocatedBytes > statistics.BudgetBytes)
            {
                SamplesOverBudget++;
            }
        }
    }

    /// <summary>The peak resident set of this process, or -1.</summary>
    public static long PeakRssBytes() => ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1;

    /// <summary>Stops sampling (waiting for a sample under way).</summary>
    public void Dispose()
    {
        using var done = new ManualResetEvent(false);
        if (_timer.Dispose(done))
        {
            _ = done.WaitOne();
        }
    }

    private sealed class Unwatch(CacheMemorySampler sampler) : IDisposable
    {
        public void Dispose() => sampler.Watch(null);
    }
}
