using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench hugepages</c>: managed arrays against jemalloc with 4 KiB pages and with transparent huge pages.</summary>
[Verb("hugepages", HelpText = "Big arrays on managed memory, jemalloc 4 KiB pages and jemalloc huge pages: --create (allocate and fill one UInt64 array), --columnar (several columns under a budget: random fill, vertical and horizontal sums). Sizes: elements (rows).")]
public sealed class HugePagesOptions : RunOptions
{
    /// <summary>Create and fill one array.</summary>
    [Option("create", HelpText = "Benchmark allocating one UInt64 array in fresh memory and filling it.")]
    public bool Create { get; set; }

    /// <summary>The columnar workload.</summary>
    [Option("columnar", HelpText = "Benchmark the columnar workload: allocate the columns and a result column, fill with random numbers, sum vertically and horizontally, free.")]
    public bool Columnar { get; set; }

    /// <summary>The number of data columns.</summary>
    [Option("columns", Default = 4, HelpText = "The number of data columns of --columnar (1-64; a result column comes on top).")]
    public int Columns { get; set; } = 4;

    /// <summary>The memory budget in MiB.</summary>
    [Option("budget", HelpText = "The memory budget of --columnar in MiB: the jemalloc columns live in a JemArena with this budget (default: what the columns need).")]
    public long? BudgetMiB { get; set; }

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "rows", HelpText = "Elements of the array (--create) or rows of each column (--columnar); default 100000000.")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
