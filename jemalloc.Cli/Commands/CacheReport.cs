using System.Globalization;
using jemalloc.Cli.Caching;

namespace jemalloc.Cli.Commands;

/// <summary>The tables and goals of <c>jembench cache</c>: one table per workload, the memory table, the goals.</summary>
public static class CacheReport
{
    private const double MiB = 1024.0 * 1024.0;

    /// <summary>Prints the tables of <paramref name="results"/> and the goals.</summary>
    public static void Print(IReadOnlyList<CacheSideResult> results, CacheSettings settings, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(results);
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(output);
        foreach (CacheWorkload workload in settings.Workloads)
        {
            PrintWorkload(results, workload, output);
        }

        PrintMemory(results, output);
        PrintGoals(results, settings, output);
    }

    /// <summary>The thread count the goals are judged at: 2 when it ran (issue 36's), else the phases' count.</summary>
    public static int GoalThreads(CacheSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Threads.Contains(2) ? 2 : settings.OnceThreads;
    }

    /// <summary>The run of <paramref name="workload"/> at <paramref name="threads"/> of a side, or null.</summary>
    public static CacheRunResult? RunOf(CacheSideResult? result, CacheWorkload workload, int threads) =>
        result?.Runs.FirstOrDefault(r => r.Workload == workload && r.Threads == threads)
        ?? (workload is CacheWorkload.Scan or CacheWorkload.Expiry ? result?.Runs.FirstOrDefault(r => r.Workload == workload) : null);

    private static void PrintWorkload(IReadOnlyList<CacheSideResult> results, CacheWorkload workload, TextWriter output)
    {
        output.WriteLine();
        output.WriteLine($"{CacheWorkloads.Name(workload)}: {CacheWorkloads.Describe(workload)}.");
        output.WriteLine();
        string extra = workload switch
        {
            CacheWorkload.Scan => " Hot-set hit before / after |",
            CacheWorkload.Expiry => " Entries at the end / after the lifetimes passed |",
            _ => string.Empty,
        };
        output.WriteLine($"| Side | Threads | M ops/s | vs bitfaster-lfu | vs memorycache | Hit ratio | p50 (us) | p99 (us) | p99.9 (us) | max (us) | GCs 0/1/2 | GC pauses (ms) | Longest GC pause (ms) | Managed B/op |{extra}");
        output.WriteLine($"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|{(extra.Length > 0 ? "---:|" : string.Empty)}");
        CacheSideResult? lfu = results.FirstOrDefault(r => r.Side == CacheSide.BitFasterLfu);
        CacheSideResult? memory = results.FirstOrDefault(r => r.Side == CacheSide.MemoryCache);
        foreach (CacheSideResult result in results)
        {
            foreach (CacheRunResult run in result.Runs.Where(r => r.Workload == workload))
            {
                string notes = workload switch
                {
                    CacheWorkload.Scan => string.Create(CultureInfo.InvariantCulture, $" {run.HotHitRatioBefore:P1} / {run.HotHitRatioAfter:P1} |"),
                    CacheWorkload.Expiry => string.Create(CultureInfo.InvariantCulture, $" {run.EntriesBeforeExpiry:N0} / {run.EntriesAfterExpiry:N0}{(result.Side == CacheSide.Dictionary ? " (no expiry)" : string.Empty)} |"),
                    _ => string.Empty,
                };
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| {CacheSides.Name(result.Side)} | {CacheCommand.ThreadsLabel(run.Threads)} | {run.OperationsPerSecond / 1e6:F2} | {Ratio(run, RunOf(lfu, workload, run.Threads))} | {Ratio(run, RunOf(memory, workload, run.Threads))} | {run.HitRatio:P1} | {run.P50Us:F2} | {run.P99Us:F1} | {run.P999Us:F1} | {run.MaxUs:F0} | {run.Gen0}/{run.Gen1}/{run.Gen2} | {run.TotalPauseMs:F1} | {Ms(run.LongestPauseMs)} | {run.AllocatedBytesPerOperation:F0} |{notes}"));
            }
        }
    }

    private static void PrintMemory(IReadOnlyList<CacheSideResult> results, TextWriter output)
    {
        CacheSideResult[] server = [.. results.Where(r => r.Server is not null)];
        if (server.Length == 0)
        {
            return;
        }

        CacheCapacity capacity = server[0].Server!;
        output.WriteLine();
        output.WriteLine("Memory (server shape; the cache's bytes at steady state, after the YCSB runs and the scan, right after one forced full collection; native bytes are the cache's own count of what jemalloc holds for it, sampled every 100 ms against its budget):");
        output.WriteLine();
        output.WriteLine("| Side | Capacity | Entries held | Keys + values (MiB) | Cache bytes (MiB) | vs native budget | Bytes per entry above key + value | Managed (MiB) | Native (MiB) | Peak native / arena (MiB) | Samples over budget | Peak managed heap (MiB) | Peak RSS (MiB) | Fill (s) | Forced full GC (ms) | Longest GC pause, all runs (ms) |");
        output.WriteLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (CacheSideResult r in server)
        {
            string cap = r.Side switch
            {
                CacheSide.Native => string.Create(CultureInfo.InvariantCulture, $"budget {capacity.BudgetBytes / MiB:F0} MiB{(capacity.BudgetRaised ? " (raised to the minimum)" : "")}"),
                CacheSide.MemoryCache => string.Create(CultureInfo.InvariantCulture, $"SizeLimit {capacity.SizeLimit / MiB:F0} MiB"),
                CacheSide.Dictionary => "unbounded",
                _ => string.Create(CultureInfo.InvariantCulture, $"{capacity.Entries:N0} entries"),
            };
            string native = r.Side == CacheSide.Native
                ? string.Create(CultureInfo.InvariantCulture, $"{r.PeakNativeBytes / MiB:F0} / {r.PeakArenaBytes / MiB:F0}")
                : "-";
            string over = r.Side == CacheSide.Native ? string.Create(CultureInfo.InvariantCulture, $"{r.SamplesOverBudget} of {r.Samples}") : "-";
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {CacheSides.Name(r.Side)} | {cap} | {r.EntriesHeld:N0} | {r.EntryBytesHeld / MiB:F0} | {r.CacheBytes / MiB:F0} | {(double)r.CacheBytes / capacity.BudgetBytes:F2}x | {(r.OverheadBytesPerEntry < 0 ? "n/a" : r.OverheadBytesPerEntry.ToString("F0", CultureInfo.InvariantCulture))} | {r.ManagedCacheBytes / MiB:F0} | {r.NativeCacheBytes / MiB:F0} | {native} | {over} | {r.PeakManagedBytes / MiB:F0} | {(r.PeakRssBytes < 0 ? "n/a" : (r.PeakRssBytes / MiB).ToString("F0", CultureInfo.InvariantCulture))} | {(r.FillSeconds < 0 ? "-" : r.FillSeconds.ToString("F1", CultureInfo.InvariantCulture))} | {Ms(r.ForcedFullGcMs)} | {Ms(CacheCommand.LongestPause(r))} |"));
        }

        if (server.FirstOrDefault(r => r.Side == CacheSide.Native) is { EntriesHeld: > 0 } split)
        {
            // Where the native side's overhead goes: the dead bytes are what compaction and eviction win back;
            // the rest is per entry by construction (header, padding, index, ghost table) or segment room.
            output.WriteLine();
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"native: of its {split.OverheadBytesPerEntry:F0} bytes per entry above key and value, {split.DeadBytesPerEntry:F0} are dead bytes waiting in its segments ({split.NativeDeadBytes / MiB:F0} MiB: entries replaced, removed or expired, not yet reclaimed by compaction or eviction); the other {split.OverheadBytesPerEntry - split.DeadBytesPerEntry:F0} are the entry headers and padding, the index and its ghost table, and segment room not yet written."));
        }
    }

    private static void PrintGoals(IReadOnlyList<CacheSideResult> results, CacheSettings settings, TextWriter output)
    {
        CacheSideResult? native = results.FirstOrDefault(r => r.Side == CacheSide.Native);
        if (native is null)
        {
            return;
        }

        CacheSideResult? lfu = results.FirstOrDefault(r => r.Side == CacheSide.BitFasterLfu);
        CacheSideResult? lru = results.FirstOrDefault(r => r.Side == CacheSide.BitFasterLru);
        CacheSideResult? memory = results.FirstOrDefault(r => r.Side == CacheSide.MemoryCache);
        int threads = GoalThreads(settings);
        output.WriteLine();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Goals of issue 36 (native against the others, this run, {settings.Entries:N0} keys, throughput at {CacheCommand.ThreadsLabel(threads)} threads; on a shared machine the times are noisy):"));
        foreach (CacheSideResult other in new[] { lfu, lru, memory }.OfType<CacheSideResult>())
        {
            Goal(output, $"longest GC pause vs {CacheSides.Name(other.Side)} (all runs)", CacheCommand.LongestPause(native), CacheCommand.LongestPause(other), 1.0 / 20, lowerIsBetter: true);
        }

        if (memory is not null && native.PeakRssBytes > 0 && memory.PeakRssBytes > 0)
        {
            Goal(output, "peak RSS vs memorycache", native.PeakRssBytes, memory.PeakRssBytes, 0.6, lowerIsBetter: true);
        }

        if (native.EntriesHeld > 0)
        {
            bool met = native.OverheadBytesPerEntry <= CacheCapacity.OverheadGoalBytes;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  bytes per entry above key and value: {native.OverheadBytesPerEntry:F1} (goal <= {CacheCapacity.OverheadGoalBytes}): {(met ? "met" : "NOT met")}"));
        }

        if (native.Samples > 0)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  budget never exceeded: {native.SamplesOverBudget} of {native.Samples} samples over it (peak {native.PeakNativeBytes / MiB:F1} MiB, arena {native.PeakArenaBytes / MiB:F1} MiB, budget {native.Server!.BudgetBytes / MiB:F1} MiB): {(native.SamplesOverBudget == 0 ? "met" : "NOT met")}"));
        }

        foreach ((CacheWorkload workload, double target) in new[] { (CacheWorkload.YcsbA, 1.5), (CacheWorkload.YcsbB, 1.2), (CacheWorkload.YcsbC, 1.2), (CacheWorkload.ZipfRead, 0.8), (CacheWorkload.ReadWrite, 0.8) })
        {
            CacheRunResult? mine = RunOf(native, workload, threads);
            if (mine is null)
            {
                continue;
            }

            if (RunOf(lfu, workload, threads) is { } theirs)
            {
                Goal(output, $"{CacheWorkloads.Name(workload)} ops/s vs bitfaster-lfu", mine.OperationsPerSecond, theirs.OperationsPerSecond, target, lowerIsBetter: false);
                if (workload is not CacheWorkload.ZipfRead)
                {
                    Goal(output, $"{CacheWorkloads.Name(workload)} hit ratio vs bitfaster-lfu", mine.HitRatio, theirs.HitRatio, 1.0, lowerIsBetter: false);
                }
            }

            if (workload is >= CacheWorkload.YcsbA && RunOf(memory, workload, threads) is { } slow)
            {
                Goal(output, $"{CacheWorkloads.Name(workload)} ops/s vs memorycache", mine.OperationsPerSecond, slow.OperationsPerSecond, 3.0, lowerIsBetter: false);
            }
        }
    }

    private static void Goal(TextWriter output, string what, double native, double other, double target, bool lowerIsBetter)
    {
        if (native < 0 || other < 0)
        {
            output.WriteLine($"  {what}: unknown (the runtime's GC events did not arrive)");
            return;
        }

        if (native == 0 && other == 0)
        {
            output.WriteLine($"  {what}: 0 on both sides (goal {(lowerIsBetter ? "<=" : ">=")} {target.ToString("F3", CultureInfo.InvariantCulture)}x): met");
            return;
        }

        double ratio = other == 0 ? double.PositiveInfinity : native / other;
        bool met = lowerIsBetter ? ratio <= target : ratio >= target;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {what}: {ratio:F3}x (goal {(lowerIsBetter ? "<=" : ">=")} {target:F3}x): {(met ? "met" : "NOT met")}"));
    }

    private static string Ratio(CacheRunResult run, CacheRunResult? other) =>
        other is null || other.OperationsPerSecond <= 0 ? "-" : string.Create(CultureInfo.InvariantCulture, $"{run.OperationsPerSecond / other.OperationsPerSecond:F2}x");

    private static string Ms(double value) => value < 0 ? "n/a" : value.ToString("F1", CultureInfo.InvariantCulture);
}
