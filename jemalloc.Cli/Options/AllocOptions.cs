using System.Globalization;
using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench alloc</c>: small-object allocation throughput.</summary>
[Verb("alloc", HelpText = "Small-object throughput: N allocations of 64..4096 bytes, then all freed; jemalloc (default and tuned thread cache) against C malloc, new byte[] and ArrayPool. Sizes: allocations per operation.")]
public sealed class AllocOptions : RunOptions
{
    /// <summary>Run in this process.</summary>
    [Option("in-process", HelpText = "Run in this process under its own jemalloc options only, instead of one process per jemalloc configuration.")]
    public bool InProcess { get; set; }

    /// <summary>The thread counts of the multi-thread suite, comma-separated; null for the single-thread suite.</summary>
    /// <remarks>One text value rather than a sequence option, so the counts given after it stay positional.</remarks>
    [Option("threads", HelpText = "Run the multi-thread suite instead, once per thread count, e.g. --threads 1,2,4: each thread makes the counts' allocations, freed on the same thread and, from 2 threads, on the next thread in a ring (producer-consumer).")]
    public string? Threads { get; set; }

    /// <summary>The thread counts <see cref="Threads"/> lists, in order, without repeats; empty when it is not given.</summary>
    /// <exception cref="CommandLineException"><see cref="Threads"/> is not a comma-separated list of whole numbers.</exception>
    public int[] ThreadCounts()
    {
        if (Threads is null)
        {
            return [];
        }

        var counts = new List<int>();
        foreach (string part in CommaList.Split(Threads))
        {
            if (!int.TryParse(part, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out int count))
            {
                throw NotAList();
            }

            counts.Add(count);
        }

        return counts.Count > 0 ? [.. counts.Distinct()] : throw NotAList();

        CommandLineException NotAList() => new($"alloc --threads: '{Threads}' is not a comma-separated list of thread counts, e.g. 1,2,4.");
    }

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "counts", HelpText = "Allocations per operation, per thread with --threads (default 2048).")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
