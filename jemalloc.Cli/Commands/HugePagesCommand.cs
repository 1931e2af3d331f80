using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites.HugePages;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>Runs <c>jembench hugepages</c>.</summary>
public static class HugePagesCommand
{
    private const int MaxColumns = 64;
    private const long MiB = 1L << 20;

    /// <summary>Checks the arguments, the budget and the memory, then runs the suite in this process.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong or the columns do not fit the budget.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in this machine's memory.</exception>
    public static int Run(HugePagesOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        RunSettings settings = options.ToRunSettings();
        string[] categories = SuiteCommands.Operations("hugepages", "--create or --columnar",
            (options.Create, Categories.Create), (options.Columnar, HugePagesBenchmarks.ColumnarCategory));
        long[] sizes = SuiteCommands.Sizes(options.Sizes, settings, quick: 1_000_000, normal: 100_000_000);
        foreach (long size in sizes)
        {
            // The managed side is an array: its length is limited.
            SuiteCommands.RequireRange("hugepages", "element count", size, Array.MaxLength);
        }

        SuiteCommands.RequireRange("hugepages", "--columns value", options.Columns, MaxColumns);
        long rows = sizes.Max();
        long nativeBytes = options.Columnar
            ? ColumnarWorkload.NativeBytes(rows, options.Columns)
            : ColumnarWorkload.LargeSizeClass(rows * sizeof(ulong));
        if (options.BudgetMiB is long given && (given < 1 || given > long.MaxValue / MiB))
        {
            throw new CommandLineException($"hugepages: --budget is in MiB and must be between 1 and {long.MaxValue / MiB:N0}; {given} is not.");
        }

        long budget = options.BudgetMiB is long budgetMiB ? budgetMiB * MiB : nativeBytes;

        if (options.Columnar && nativeBytes > budget)
        {
            throw new CommandLineException(
                $"hugepages: {options.Columns} columns and a result column of {rows:N0} rows need {nativeBytes / MiB:N0} MiB in jemalloc size classes, more than the --budget of {budget / MiB:N0} MiB.");
        }

        long managedBytes = (options.Columnar ? options.Columns + 1L : 1L) * rows * sizeof(ulong);
        MemoryCheck.EnsureFits("hugepages", new MemoryNeed(nativeBytes, managedBytes,
            options.Columnar ? $"{options.Columns + 1} columns of {rows:N0} UInt64" : $"UInt64[{rows:N0}]"));
        ColumnarWorkload.Columns = options.Columns;
        ColumnarWorkload.BudgetBytes = Math.Max(budget, nativeBytes);
        int exit = SuiteCommands.RunInProcess(settings, categories, sizes, output, typeof(HugePagesBenchmarks));
        // The suite compares the two page sizes explicitly; this is what arrays created without options get here.
        _ = HugePagePolicy.Measure();
        output.WriteLine($"Huge-page policy: {HugePagePolicy.Describe()}");
        return exit;
    }
}
