namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The sizes the next run of a suite uses: the positional values of the command line. Suites read
/// them through <c>[ParamsSource]</c>, which BenchmarkDotNet evaluates in the launching process.
/// </summary>
public static class SuiteParameters
{
    private static long[] s_sizes = [];
    private static int[] s_threads = [1];

    /// <summary>The sizes (element counts, allocation counts or rounds, as each suite documents).</summary>
    /// <exception cref="ArgumentException">Set to an empty list or a size below 1.</exception>
    public static IReadOnlyList<long> Sizes
    {
        get => s_sizes;
        set
        {
            ArgumentNullException.ThrowIfNull(value);
            if (value.Count == 0 || value.Any(size => size < 1))
            {
                throw new ArgumentException("At least one size is needed and every size must be 1 or more.", nameof(value));
            }

            s_sizes = [.. value];
        }
    }

    /// <summary>The thread counts of the multi-thread <c>alloc</c> suite (<c>--threads</c>).</summary>
    /// <exception cref="ArgumentException">Set to an empty list or a count below 1 or above <see cref="WorkerTeam.MaxThreads"/>.</exception>
    public static IReadOnlyList<int> Threads
    {
        get => s_threads;
        set
        {
            ArgumentNullException.ThrowIfNull(value);
            if (value.Count == 0 || value.Any(threads => threads < 1 || threads > WorkerTeam.MaxThreads))
            {
                throw new ArgumentException($"At least one thread count is needed and every count must be between 1 and {WorkerTeam.MaxThreads}.", nameof(value));
            }

            s_threads = [.. value];
        }
    }
}
