using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites.Arenas;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>Runs <c>jembench arena</c>.</summary>
public static class ArenaCommand
{
    private const long MaxAllocations = 10_000_000;
    private const long LargestAllocation = 1024;

    /// <summary>Checks the arguments and the memory, then runs the suite in this process.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in this machine's memory.</exception>
    public static int Run(ArenaOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        RunSettings settings = options.ToRunSettings();
        long[] sizes = SuiteCommands.Sizes(options.Sizes, settings, quick: 1000, normal: 100_000);
        foreach (long size in sizes)
        {
            SuiteCommands.RequireRange("arena", "allocation count", size, MaxAllocations);
        }

        long bytes = sizes.Max() * LargestAllocation;
        MemoryCheck.EnsureFits("arena", new MemoryNeed(bytes, bytes, $"{sizes.Max():N0} allocations of up to {LargestAllocation} bytes"));
        return SuiteCommands.RunInProcess(settings, [], sizes, output, typeof(ArenaBenchmarks));
    }
}
