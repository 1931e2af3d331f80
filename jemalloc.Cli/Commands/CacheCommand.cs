using System.Globalization;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Caching;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>
/// <c>jembench cache</c>: runs each side (by default each in a process of its own) through the workloads, prints a
/// table per workload with ratios to BitFaster's LFU and to MemoryCache, the memory table and the goals, and fails
/// with exit code 2 when any side read a value that was not written for its key (each side checks every read).
/// </summary>
public static class CacheCommand
{
    private const string ResultPrefix = "cache-result: ";
    private const double MiB = 1024.0 * 1024.0;
    private const int MaxEntries = 100_000_000;

    // Roughly what an entry of the server shape takes: its key and value (a mean of about 490 bytes) and a managed
    // cache's objects; the dictionary holds every key.
    private const long ManagedBytesPerKey = 700;

    /// <summary>Runs the verb.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side or workload.</exception>
    /// <exception cref="InsufficientMemoryException">The caches do not fit in this machine's memory.</exception>
    public static int Run(CacheOptions options, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        (List<CacheSide> sides, CacheSettings settings) = Parse(options);
        if (options.Child)
        {
            if (sides.Count != 1)
            {
                throw new CommandLineException("cache: a child runs exactly one side.");
            }

            SideProcess.WriteResult(output, ResultPrefix, CacheHarness.Run(sides[0], settings, TextWriter.Null));
            return Program.ExitSuccess;
        }

        if (options.Plot is not null)
        {
            // Before the sides run for minutes, not after.
            ChartFile.CheckPath(options.Plot, "cache");
        }

        if (settings.RunsServerShape)
        {
            long keys = settings.Entries + (long)settings.ServerCapacityEntries;
            MemoryCheck.EnsureFits("cache", new MemoryNeed((long)(settings.ServerCapacityEntries * 540.0), sides.Any(s => s != CacheSide.Native) ? keys * ManagedBytesPerKey : 0,
                $"caches of the server shape's {settings.Entries:N0} keys"));
        }

        IReadOnlyList<string>? jembench = options.InProcess ? null : SideProcess.JembenchCommand();
        if (!options.InProcess && jembench is null)
        {
            output.WriteLine("cache: this process is not jembench, so the sides run in this process (peak RSS and collections are then cumulative).");
        }

        PrintHeading(sides, settings, output);
        var results = new List<CacheSideResult>();
        var failed = new List<CacheSide>();
        using (var load = new HostLoad())
        {
            foreach (CacheSide side in sides)
            {
                CacheSideResult? result = jembench is null ? RunHere(side, settings, output, error) : RunChild(jembench, side, options, error);
                if (result is null)
                {
                    error.WriteLine($"cache: the {CacheSides.Name(side)} side failed.");
                    failed.Add(side);
                    continue;
                }

                results.Add(result);
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"cache: {CacheSides.Name(side)} done: {result.Runs.Length} runs, longest GC pause {LongestPause(result):F1} ms, peak RSS {Mib(result.PeakRssBytes)} MiB."));
            }

            CacheReport.Print(results, settings, output);
            load.Report(output, "cache");
        }

        if (failed.Count > 0)
        {
            error.WriteLine($"cache: {failed.Count} side(s) failed: {string.Join(", ", failed.Select(CacheSides.Name))}; see above.");
            return Program.ExitBenchmarkFailed;
        }

        if (options.Plot is not null
            && ChartFile.Write("cache", options.Plot, file => CacheChart.Write(results, settings, file), output, error) != Program.ExitSuccess)
        {
            return Program.ExitBadArguments;
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"cache: results checked: each of the {results.Sum(r => r.Runs.Sum(run => run.Hits)):N0} values read was written for its key, with a version written and its length and check intact."));
        return Program.ExitSuccess;
    }

    /// <summary>The longest GC pause of any of a side's runs (-1 if unknown).</summary>
    public static double LongestPause(CacheSideResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return result.Runs.Length == 0 ? 0 : result.Runs.Max(r => r.LongestPauseMs);
    }

    /// <summary>Parses and checks the options.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side or workload.</exception>
    public static (List<CacheSide> Sides, CacheSettings Settings) Parse(CacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var sides = new List<CacheSide>();
        foreach (string name in CommaList.Split(options.Sides))
        {
            CacheSide side = CacheSides.Parse(name)
                ?? throw new CommandLineException($"cache: unknown side '{name}'; the sides are {string.Join(", ", Enum.GetValues<CacheSide>().Select(CacheSides.Name))}.");
            if (!sides.Contains(side))
            {
                sides.Add(side);
            }
        }

        var workloads = new SortedSet<CacheWorkload>();
        foreach (string name in CommaList.Split(options.Workloads))
        {
            _ = workloads.Add(CacheWorkloads.Parse(name)
                ?? throw new CommandLineException($"cache: unknown workload '{name}'; the workloads are {string.Join(", ", Enum.GetValues<CacheWorkload>().Select(CacheWorkloads.Name))}."));
        }

        var threads = new List<int>();
        foreach (string text in CommaList.Split(options.Threads))
        {
            if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int count) || count is < 1 or > WorkerTeam.MaxThreads)
            {
                throw new CommandLineException($"cache: --threads takes thread counts from 1 to {WorkerTeam.MaxThreads}, comma-separated; '{text}' is not one.");
            }

            if (!threads.Contains(count))
            {
                threads.Add(count);
            }
        }

        if (threads.Count == 0)
        {
            throw new CommandLineException("cache: --threads needs at least one thread count.");
        }

        if (options.Entries is < 1_000 or > MaxEntries)
        {
            throw new CommandLineException($"cache: --entries must be from 1,000 to 100,000,000; got {options.Entries:N0}.");
        }

        if (options.CachePercent is < 1 or > 100)
        {
            throw new CommandLineException($"cache: --cache-percent must be from 1 to 100; got {options.CachePercent}.");
        }

        if (options.Operations < 1)
        {
            throw new CommandLineException($"cache: --ops must be at least 1; got {options.Operations}.");
        }

        if (!(options.ExpirySeconds is >= 0.1 and <= 3600))
        {
            throw new CommandLineException($"cache: --expiry-seconds must be from 0.1 to 3600; got {options.ExpirySeconds.ToString(CultureInfo.InvariantCulture)}.");
        }

        return (sides.Count == 0 ? [.. Enum.GetValues<CacheSide>()] : sides,
            new CacheSettings(options.Entries, options.CachePercent, options.Operations, [.. threads],
                workloads.Count == 0 ? Enum.GetValues<CacheWorkload>() : [.. workloads], options.ExpirySeconds));
    }

    private static void PrintHeading(List<CacheSide> sides, CacheSettings settings, TextWriter output)
    {
        int cores = Environment.ProcessorCount;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"cache: sides {string.Join(", ", sides.Select(CacheSides.Name))}; workloads {string.Join(", ", settings.Workloads.Select(CacheWorkloads.Name))}; threads {string.Join(", ", settings.Threads.Select(t => ThreadsLabel(t)))}; {settings.Operations:N0} operations per run; this machine has {cores} cores; GC: {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}."));
        // With today's shapes neither small shape warns (zipf-read's cache holds every key, read-write's budget is
        // above the minimum); checked here so that a change to their sizes cannot skew them silently.
        foreach (CacheWorkload workload in settings.Workloads.Where(w => w is CacheWorkload.ZipfRead or CacheWorkload.ReadWrite))
        {
            (CacheKeySpace space, CacheCapacity capacity) = CacheHarness.SmallShape(workload);
            if (RaisedBudgetWarning(CacheWorkloads.Name(workload), space.Count, capacity, null) is string warning)
            {
                output.WriteLine(warning);
            }
        }

        if (settings.RunsServerShape)
        {
            foreach (string line in ServerShapeLines(settings))
            {
                output.WriteLine(line);
            }
        }
    }

    /// <summary>
    /// The heading's line on the server shape's keys and what each side may hold, and when the native budget was
    /// raised to the native cache's minimum and so holds more than the other sides, a warning line after it.
    /// </summary>
    public static IReadOnlyList<string> ServerShapeLines(CacheSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var space = new CacheKeySpace(settings.Entries, settings.Entries, smallValues: false);
        CacheCapacity capacity = CacheCapacity.For(space, settings.ServerCapacityEntries);
        string native = capacity.BudgetRaised
            ? string.Create(CultureInfo.InvariantCulture,
                $"native a budget of {capacity.BudgetBytes / MiB:F1} MiB ({capacity.BudgetBytes:N0} B), the native cache's minimum, raised from {capacity.GoalBudgetBytes:N0} B = {capacity.Entries:N0} x ({capacity.MeanEntryBytes:F1} B + {CacheCapacity.OverheadGoalBytes} B, the overhead goal), so it has room for about {capacity.RoomAtGoal:N0} entries at that overhead where the entry-count sides hold {capacity.Entries:N0}")
            : string.Create(CultureInfo.InvariantCulture,
                $"native a budget of {capacity.BudgetBytes / MiB:F1} MiB = {capacity.Entries:N0} x ({capacity.MeanEntryBytes:F1} B + {CacheCapacity.OverheadGoalBytes} B, the overhead goal), so the entry-count sides' {capacity.Entries:N0} entries are what the budget holds at that overhead");
        var lines = new List<string>
        {
            string.Create(CultureInfo.InvariantCulture,
                $"cache: server shape: {settings.Entries:N0} keys of {CacheData.MinKeyLength}-{CacheData.MaxKeyLength} bytes, values log-normal (median {CacheData.MedianValueLength:F0} B, p99 {CacheData.P99ValueLength:F0} B), mean key and value {capacity.MeanEntryBytes:F1} B; the caches are sized for {settings.CachePercent}% of the keys: {native}; memorycache a SizeLimit of {capacity.SizeLimit / MiB:F1} MiB of keys and values."),
        };
        if (capacity.NativeHoldsMore(settings.Entries))
        {
            int past = EntriesPastMinimumBudget(settings);
            string? hint = past < 0 ? null : string.Create(CultureInfo.InvariantCulture, $"--entries {past:N0} at --cache-percent {settings.CachePercent} sizes the caches past the minimum.");
            lines.Add(RaisedBudgetWarning("server shape", settings.Entries, capacity, hint)!);
        }

        return lines;
    }

    /// <summary>
    /// An <c>--entries</c> at <paramref name="settings"/>' <c>--cache-percent</c> whose native budget is not raised to
    /// the native cache's minimum: the first found from what the current mean entry asks for up (each key count
    /// has its own mean entry, so the estimate is checked), or -1 if none is found within the option's range.
    /// </summary>
    public static int EntriesPastMinimumBudget(CacheSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        CacheCapacity capacity = CacheCapacity.For(new CacheKeySpace(settings.Entries, settings.Entries, smallValues: false), settings.ServerCapacityEntries);
        long entries = settings.Entries;
        // Each try moves up by at least one key; the mean entry settles as the keys grow, so a few tries do.
        for (int tries = 0; tries < 1_000; tries++)
        {
            entries = Math.Max(entries + 1, (long)Math.Ceiling(capacity.EntriesForMinimumBudget * 100.0 / settings.CachePercent));
            if (entries > MaxEntries)
            {
                return -1;
            }

            CacheSettings tried = settings with { Entries = (int)entries };
            capacity = CacheCapacity.For(new CacheKeySpace(tried.Entries, tried.Entries, smallValues: false), tried.ServerCapacityEntries);
            if (!capacity.BudgetRaised)
            {
                return tried.Entries;
            }
        }

        return -1;
    }

    /// <summary>
    /// The warning for a shape whose native budget was raised to the native cache's minimum while the entry-count
    /// sides hold fewer than all of its <paramref name="keys"/> keys (so the native side holds more than they do), or
    /// null when the sides hold alike.
    /// </summary>
    /// <param name="shape">The shape's name, as the output names it.</param>
    /// <param name="keys">The keys the shape's workloads read.</param>
    /// <param name="capacity">What each side may hold.</param>
    /// <param name="hint">A sentence on how to size the shape's caches past the minimum with the command's options; null if they do not size it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="capacity"/> is null.</exception>
    public static string? RaisedBudgetWarning(string shape, int keys, CacheCapacity capacity, string? hint)
    {
        ArgumentNullException.ThrowIfNull(capacity);
        if (!capacity.NativeHoldsMore(keys))
        {
            return null;
        }

        string holds = capacity.RoomAtGoal >= keys
            ? string.Create(CultureInfo.InvariantCulture, $"every one of the {keys:N0} keys")
            : string.Create(CultureInfo.InvariantCulture, $"about {capacity.RoomAtGoal:N0} entries");
        return string.Create(CultureInfo.InvariantCulture,
            $"cache: WARNING: {shape}: the native budget was raised from {capacity.GoalBudgetBytes:N0} B to the native cache's minimum of {NativeCache.MinimumBudgetBytes:N0} B, so the native side can hold {holds} while the entry-count sides and memorycache hold about {capacity.Entries:N0}: its hit ratios and throughput are not comparable with theirs.{(hint is null ? "" : " " + hint)}");
    }

    /// <summary>A thread count, with the machine's cores when it has fewer.</summary>
    public static string ThreadsLabel(int threads) => threads > Environment.ProcessorCount
        ? string.Create(CultureInfo.InvariantCulture, $"{threads} (machine has {Environment.ProcessorCount} cores)")
        : threads.ToString(CultureInfo.InvariantCulture);

    private static CacheSideResult? RunHere(CacheSide side, CacheSettings settings, TextWriter output, TextWriter error)
    {
        try
        {
            return CacheHarness.Run(side, settings, output);
        }
        catch (BenchmarkVerificationException e)
        {
            // Every side runs and is named: a wrong value makes the command fail at the end, with exit code 2.
            error.WriteLine($"cache: WRONG RESULT: {e.Message}");
            return null;
        }
#pragma warning disable CA1031 // A cache that throws fails its side, as a child process that dies of it does: the other sides still run.
        catch (Exception e)
#pragma warning restore CA1031
        {
            error.WriteLine($"cache: the {CacheSides.Name(side)} side threw {e.GetType().Name}: {e.Message}");
            return null;
        }
    }

    private static CacheSideResult? RunChild(IReadOnlyList<string> jembench, CacheSide side, CacheOptions options, TextWriter error)
    {
        var arguments = new List<string>
        {
            "cache", "--child", "--side", CacheSides.Name(side),
            "--entries", options.Entries.ToString(CultureInfo.InvariantCulture),
            "--cache-percent", options.CachePercent.ToString(CultureInfo.InvariantCulture),
            "--ops", options.Operations.ToString(CultureInfo.InvariantCulture),
            "--threads", options.Threads,
            "--expiry-seconds", options.ExpirySeconds.ToString(CultureInfo.InvariantCulture),
        };
        if (options.Workloads is not null)
        {
            arguments.Add("--workload");
            arguments.Add(options.Workloads);
        }

        return SideProcess.Run<CacheSideResult>(jembench, arguments, ResultPrefix, $"cache: the {CacheSides.Name(side)}", error);
    }

    private static string Mib(long bytes) => bytes < 0 ? "n/a" : (bytes / MiB).ToString("F0", CultureInfo.InvariantCulture);
}
