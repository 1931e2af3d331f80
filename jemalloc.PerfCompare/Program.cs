namespace jemalloc.PerfCompare;

/// <summary>
/// <c>./build.sh compare-builds OLD [NEW]</c>'s measuring program. Started as <c>worker</c> it measures
/// against the library it was built with (<see cref="Worker"/>); otherwise it drives two such builds
/// and compares them (<see cref="Comparison"/>).
/// </summary>
internal static class Program
{
    internal const int ExitSuccess = 0;
    internal const int ExitBadArguments = 1;
    internal const int ExitWrongResult = 2;
    internal const int ExitError = 4;
    internal const int ExitOverTolerance = 5;

    private static int Main(string[] args)
    {
        if (args is ["worker"])
        {
            return Worker.Run(Console.In, Console.Out);
        }

        CompareOptions options;
        try
        {
            options = CompareOptions.Parse(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"compare-builds: {e.Message}");
            Console.Error.WriteLine(CompareOptions.Usage);
            return ExitBadArguments;
        }

        if (options.Help)
        {
            Console.Out.WriteLine(CompareOptions.Usage);
            return ExitSuccess;
        }

        try
        {
            var load = new LoadAverage();
            IReadOnlyList<RowResult> rows = Comparison.Run(options, Console.Out, load, out bool cpuClock);
            Report.Table(Console.Out, options, rows, cpuClock, load);
            return rows.All(r => r.Measurement.IsControl || r.Passed) ? ExitSuccess : ExitOverTolerance;
        }
        catch (ResultCheckException e)
        {
            Console.Error.WriteLine($"compare-builds: WRONG RESULT: {e.Message}");
            return ExitWrongResult;
        }
        catch (WorkerException e)
        {
            Console.Error.WriteLine($"compare-builds: {e.Message}");
            return ExitError;
        }
    }
}
