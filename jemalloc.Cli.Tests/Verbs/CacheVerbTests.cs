using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using jemalloc.Cli.Caching;
using jemalloc.Cli.Commands;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// <c>jembench cache</c> in this process (the sides then run here): its options, small runs of every side and
/// workload, the child's JSON, the chart.
/// </summary>
[Collection(JembenchRuns.Name)]
public class CacheVerbTests
{
    private static readonly string[] Small = ["--entries", "5000", "--ops", "20000", "--threads", "1,2", "--expiry-seconds", "0.2"];
    private static readonly string[] AllSides = ["native", "bitfaster-lru", "bitfaster-lfu", "memorycache", "dictionary"];

    [Fact]
    public void The_options_parse_with_their_defaults()
    {
        CacheOptions options = Assert.IsType<CacheOptions>(((CommandLine.Parsed<object>)Program.Parse(["cache"])).Value);
        (List<CacheSide> sides, CacheSettings settings) = CacheCommand.Parse(options);
        Assert.Equal(Enum.GetValues<CacheSide>(), sides);
        Assert.Equal(5_000_000, settings.Entries);
        Assert.Equal(2_500_000, settings.ServerCapacityEntries);
        Assert.Equal([1, 2, 4], settings.Threads);
        Assert.Equal(Enum.GetValues<CacheWorkload>(), settings.Workloads);
        Assert.Equal(2_000_000, settings.Operations);
    }

    [Fact]
    public void Lists_parse_in_any_order_without_repeats()
    {
        CacheOptions options = Assert.IsType<CacheOptions>(((CommandLine.Parsed<object>)Program.Parse(
            ["cache", "--side", "dictionary,native,dictionary", "--workload", "expiry,ycsb-a,zipf-read", "--threads", "4,1,4", "--cache-percent", "10"])).Value);
        (List<CacheSide> sides, CacheSettings settings) = CacheCommand.Parse(options);
        Assert.Equal([CacheSide.Dictionary, CacheSide.Native], sides);
        Assert.Equal([CacheWorkload.ZipfRead, CacheWorkload.YcsbA, CacheWorkload.Expiry], settings.Workloads);
        Assert.Equal([4, 1], settings.Threads);
        Assert.Equal(500_000, settings.ServerCapacityEntries);
    }

    [Theory]
    [InlineData("unknown side 'lru'", "--side", "lru")]
    [InlineData("unknown workload 'ycsb-d'", "--workload", "ycsb-d")]
    [InlineData("'0' is not one", "--threads", "0")]
    [InlineData("'65' is not one", "--threads", "1,65")]
    [InlineData("'two' is not one", "--threads", "two")]
    [InlineData("at least one thread count", "--threads", ",")]
    [InlineData("--entries must be from 1,000", "--entries", "999")]
    [InlineData("--entries must be from 1,000", "--entries", "100000001")]
    [InlineData("--cache-percent must be from 1 to 100", "--cache-percent", "0")]
    [InlineData("--cache-percent must be from 1 to 100", "--cache-percent", "101")]
    [InlineData("--ops must be at least 1", "--ops", "0")]
    [InlineData("--expiry-seconds must be from 0.1", "--expiry-seconds", "0")]
    [InlineData("--expiry-seconds must be from 0.1", "--expiry-seconds", "NaN")]
    [InlineData("--plot writes an .svg or a .png", "--plot", "chart.txt")]
    [InlineData("takes no positional values", "--side", "native", "dictionary")]
    public void Bad_options_are_refused_before_anything_runs(string message, params string[] arguments)
    {
        Jembench.Result result = Jembench.Run(["cache", .. arguments]);
        Assert.True(result.ExitCode == Program.ExitBadArguments, result.All);
        Assert.Contains(message, result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("| native |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_side_runs_every_workload_and_checks_its_reads()
    {
        Jembench.Result result = Jembench.Run(["cache", .. Small]);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("this process is not jembench", result.Output, StringComparison.Ordinal);
        foreach (CacheWorkload workload in Enum.GetValues<CacheWorkload>())
        {
            Assert.Contains($"{CacheWorkloads.Name(workload)}: ", result.Output, StringComparison.Ordinal);
        }

        string[] lines = result.Output.Split('\n');
        foreach (string side in AllSides)
        {
            // Two thread counts of five workloads, the scan and the expiry phase once, and the memory table.
            Assert.True(lines.Count(l => l.StartsWith($"| {side} |", StringComparison.Ordinal)) == 13, $"{side}: {result.All}");
        }

        Assert.Contains("bytes per entry above key and value:", result.Output, StringComparison.Ordinal);
        Match split = Regex.Match(result.Output, @"native: of its ([0-9]+) bytes per entry above key and value, ([0-9]+) are dead bytes waiting in its segments \(([0-9]+) MiB: .*\); the other ([0-9]+) are the entry headers");
        Assert.True(split.Success, result.Output);
        int total = int.Parse(split.Groups[1].Value, CultureInfo.InvariantCulture);
        int dead = int.Parse(split.Groups[2].Value, CultureInfo.InvariantCulture);
        int other = int.Parse(split.Groups[4].Value, CultureInfo.InvariantCulture);
        Assert.InRange(dead + other, total - 1, total + 1);
        Assert.InRange(other, 16, total);
        Assert.Contains("budget never exceeded: 0 of", result.Output, StringComparison.Ordinal);
        Assert.Contains("ycsb-b ops/s vs bitfaster-lfu:", result.Output, StringComparison.Ordinal);
        Assert.Contains("longest GC pause vs memorycache (all runs):", result.Output, StringComparison.Ordinal);
        Assert.Contains("5,000 / 5,000 (no expiry)", result.Output, StringComparison.Ordinal);
        Assert.Matches(OperatingSystem.IsLinux() ? @"cache: load average \(1 min\) during the run: [0-9.]+ to [0-9.]+ over [0-9]+ samples, on [0-9]+ cores\." : "cache: load average: not available", result.Output);
        Assert.Contains("cache: results checked: each of the", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("WRONG", result.All, StringComparison.Ordinal);
        // 2,500 entries take more than the native cache's minimum budget: the sides are sized alike.
        Assert.Contains("native a budget of 1.3 MiB = 2,500 x (508.4 B + 48 B, the overhead goal)", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("budget was raised", result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("raised to the minimum", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_run_too_small_for_the_native_minimum_says_the_budget_was_raised_and_warns()
    {
        Jembench.Result result = Jembench.Run("cache", "--side", "native,bitfaster-lfu", "--workload", "ycsb-c", "--entries", "1000", "--ops", "2000", "--threads", "1");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains("native a budget of 1.0 MiB (1,048,576 B), the native cache's minimum, raised from 297,961 B = 500 x (547.9 B + 48 B, the overhead goal)", result.Output, StringComparison.Ordinal);
        Assert.Contains("cache: WARNING: server shape: the native budget was raised from 297,961 B to the native cache's minimum of 1,048,576 B, so the native side can hold every one of the 1,000 keys", result.Output, StringComparison.Ordinal);
        Assert.Contains("| native | budget 1 MiB (raised to the minimum) |", result.Output, StringComparison.Ordinal);
        Assert.Contains("| bitfaster-lfu | 500 entries |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void Thread_counts_above_the_cores_say_how_many_cores_the_machine_has()
    {
        int above = Environment.ProcessorCount + 1;
        Jembench.Result result = Jembench.Run("cache", "--side", "dictionary", "--workload", "zipf-read", "--ops", "1000", "--threads", $"1,{above}");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        Assert.Contains($"| dictionary | {above} (machine has {Environment.ProcessorCount} cores) |", result.Output, StringComparison.Ordinal);
        Assert.Contains("| dictionary | 1 |", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_prints_its_result_as_json()
    {
        Jembench.Result result = Jembench.Run(["cache", "--child", "--side", "bitfaster-lfu", "--workload", "ycsb-b,scan", .. Small]);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("cache-result: ", StringComparison.Ordinal));
        CacheSideResult parsed = JsonSerializer.Deserialize<CacheSideResult>(line["cache-result: ".Length..])!;
        Assert.Equal(CacheSide.BitFasterLfu, parsed.Side);
        Assert.Equal(3, parsed.Runs.Length);
        Assert.Equal(2_500, parsed.Server!.Entries);
        Assert.InRange(parsed.EntriesHeld, 1, 2_500);
        Assert.True(parsed.EntryBytesHeld > parsed.EntriesHeld * CacheData.MinValueLength);
        Assert.True(parsed.ManagedCacheBytes > parsed.EntryBytesHeld, $"{parsed.ManagedCacheBytes} managed bytes for {parsed.EntryBytesHeld} of keys and values");
        Assert.Equal(0, parsed.NativeCacheBytes);
        Assert.Equal(0, parsed.NativeDeadBytes);
        CacheRunResult ycsb = parsed.Runs[0];
        Assert.Equal(CacheWorkload.YcsbB, ycsb.Workload);
        Assert.Equal(20_000, ycsb.Operations);
        Assert.InRange(ycsb.Reads, 18_000, 19_999);
        Assert.True(ycsb.Hits > 0 && ycsb.Hits < ycsb.Reads);
        Assert.True(ycsb.P50Us > 0 && ycsb.P50Us <= ycsb.P99Us && ycsb.P99Us <= ycsb.P999Us && ycsb.P999Us <= ycsb.MaxUs);
        CacheRunResult scan = parsed.Runs[2];
        Assert.Equal(CacheWorkload.Scan, scan.Workload);
        Assert.Equal(2_500, scan.Operations);
        Assert.Equal(0, scan.Hits);
        Assert.InRange(scan.HotHitRatioBefore, 0.01, 1);
        Assert.InRange(scan.HotHitRatioAfter, 0, 1);
    }

    [Fact]
    public void The_native_side_reports_its_budget_and_bytes()
    {
        Jembench.Result result = Jembench.Run(["cache", "--child", "--side", "native", "--workload", "ycsb-a", .. Small]);
        Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
        string line = Assert.Single(result.Output.Split('\n'), l => l.StartsWith("cache-result: ", StringComparison.Ordinal));
        CacheSideResult parsed = JsonSerializer.Deserialize<CacheSideResult>(line["cache-result: ".Length..])!;
        Assert.True(parsed.Samples > 0);
        Assert.Equal(0, parsed.SamplesOverBudget);
        Assert.InRange(parsed.PeakNativeBytes, 1, parsed.Server!.BudgetBytes);
        Assert.InRange(parsed.NativeCacheBytes, 1, parsed.Server.BudgetBytes);
        Assert.True(parsed.EntriesHeld > 0);
        // Dead bytes are part of what the cache holds, never more than it beyond its entries.
        Assert.InRange(parsed.NativeDeadBytes, 0, parsed.NativeCacheBytes - parsed.EntryBytesHeld);
    }

    [Fact]
    public void Plot_writes_an_svg_chart_naming_every_side()
    {
        string path = Path.Combine(Path.GetTempPath(), $"cache-{Guid.NewGuid():N}.svg");
        try
        {
            Jembench.Result result = Jembench.Run(["cache", "--side", "native,bitfaster-lfu,memorycache", "--workload", "ycsb-b", "--plot", path, .. Small]);
            Assert.True(result.ExitCode == Program.ExitSuccess, result.All);
            Assert.Contains($"chart written to {path}", result.Output, StringComparison.Ordinal);
            var svg = System.Xml.Linq.XDocument.Load(path);
            string text = string.Concat(svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value));
            Assert.Contains("native", text, StringComparison.Ordinal);
            Assert.Contains("bitfaster-lfu", text, StringComparison.Ordinal);
            Assert.Contains("memorycache", text, StringComparison.Ordinal);
            Assert.DoesNotContain("dictionary", text, StringComparison.Ordinal);
            Assert.Contains("longest GC pause", text, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }
    }
}
