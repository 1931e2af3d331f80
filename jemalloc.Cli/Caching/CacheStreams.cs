namespace jemalloc.Cli.Caching;

/// <summary>
/// The operation streams of <c>jembench cache</c>, made before a run from a seed, so every side and process
/// runs the same operations: each entry is a key, with the top bit set for a write.
/// </summary>
public static class CacheStreams
{
    /// <summary>The top bit of an operation: a write rather than a read.</summary>
    public const int WriteFlag = int.MinValue;

    /// <summary>One thread's stream.</summary>
    /// <param name="zipf">Draws the keys.</param>
    /// <param name="count">Operations.</param>
    /// <param name="writeShare">The share of writes, 0 to 1.</param>
    /// <param name="seed">The stream's seed (e.g. from the workload, the thread count and the thread).</param>
    /// <exception cref="ArgumentNullException"><paramref name="zipf"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative or <paramref name="writeShare"/> not in [0, 1].</exception>
    public static int[] Make(ZipfSampler zipf, int count, double writeShare, ulong seed)
    {
        ArgumentNullException.ThrowIfNull(zipf);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        if (writeShare is < 0 or > 1)
        {
            throw new ArgumentOutOfRangeException(nameof(writeShare), writeShare, "The share of writes must be from 0 to 1.");
        }

        var stream = new int[count];
        ulong state = CacheData.Mix(seed);
        for (int i = 0; i < count; i++)
        {
            state = CacheData.Mix(state);
            int key = zipf.Key((state >> 11) / 9_007_199_254_740_992.0);
            bool write = writeShare > 0 && (CacheData.Mix(state ^ 0xABCD) >> 11) / 9_007_199_254_740_992.0 < writeShare;
            stream[i] = write ? key | WriteFlag : key;
        }

        return stream;
    }

    /// <summary>The seed of thread <paramref name="thread"/> of <paramref name="threads"/> in <paramref name="workload"/>.</summary>
    public static ulong Seed(CacheWorkload workload, int threads, int thread) =>
        ((ulong)(workload + 1) << 40) ^ ((ulong)threads << 20) ^ (ulong)thread;
}
