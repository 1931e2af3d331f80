namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Samples a heap after every round of the <c>malloc --fragment</c> pattern (outside the timed run):
/// the managed heap through <see cref="GC.GetGCMemoryInfo()"/>, jemalloc through its
/// <c>stats.*</c> counters (refreshed with <c>epoch</c> first), and the process's resident memory,
/// each relative to the values taken when the sampler is made. Keeps the peak of every figure.
/// </summary>
public sealed class FragmentationSampler
{
    private readonly bool _managed;
    private readonly FragmentationSample _start;
    private FragmentationSample _peak;
    private int _rounds;

    /// <summary>Takes the starting values of the managed heap (<paramref name="managed"/>) or of jemalloc.</summary>
    /// <exception cref="MallctlException">jemalloc's statistics cannot be read (built without them).</exception>
    public FragmentationSampler(bool managed)
    {
        _managed = managed;
        _start = Read(0);
        _peak = new FragmentationSample(long.MinValue, long.MinValue, long.MinValue, long.MinValue, long.MinValue);
    }

    /// <summary>Samples the heap after a round in which the pattern holds <paramref name="liveBytes"/> alive.</summary>
    /// <exception cref="MallctlException">jemalloc's statistics cannot be read.</exception>
    public void Sample(long liveBytes)
    {
        FragmentationSample now = Read(liveBytes);
        FragmentationSample change = new(
            now.Live,
            now.Heap - _start.Heap,
            now.Fragmented - _start.Fragmented,
            now.Mapped - _start.Mapped,
            now.Resident - _start.Resident);
        _peak = new FragmentationSample(
            Math.Max(_peak.Live, change.Live),
            Math.Max(_peak.Heap, change.Heap),
            Math.Max(_peak.Fragmented, change.Fragmented),
            Math.Max(_peak.Mapped, change.Mapped),
            Math.Max(_peak.Resident, change.Resident));
        _rounds++;
    }

    /// <summary>The peak of every figure over the rounds sampled.</summary>
    /// <exception cref="InvalidOperationException">No round was sampled.</exception>
    public FragmentationSample Peak => _rounds > 0
        ? _peak
        : throw new InvalidOperationException("No round of the fragmentation pattern was sampled.");

    private FragmentationSample Read(long liveBytes)
    {
        long resident = ProcessMemory.ResidentBytes(Environment.ProcessId) ?? 0;
        if (_managed)
        {
            GCMemoryInfo info = GC.GetGCMemoryInfo();
            return new FragmentationSample(liveBytes, info.HeapSizeBytes, info.FragmentedBytes, info.TotalCommittedBytes, resident);
        }

        // Flushes this thread's cache (when it has one) and advances the epoch: the counters are current.
        JemControl.RefreshStatistics();
        JemStatistics stats = Jem.GetStatistics();
        return new FragmentationSample(liveBytes, (long)stats.Active, (long)stats.Active - (long)stats.Allocated, (long)stats.Mapped, resident);
    }
}
