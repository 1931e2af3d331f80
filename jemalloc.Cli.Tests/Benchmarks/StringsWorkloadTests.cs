using System.Text;
using jemalloc.Cli.Columnar;
using jemalloc.Cli.Strings;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary><c>jembench strings</c>' pieces: the reference's check, the UTF-8 group-by, and the GC pause measurement.</summary>
[Collection(Verbs.JembenchRuns.Name)]
public sealed class StringsWorkloadTests
{
    private static readonly StringsReference Reference = new(1000, 30, 499_500, 123_456,
        [new StringsGroup("cat-1-aaaa", 10, 12_345), new StringsGroup("cat-2-bbbb", 15, -700), new StringsGroup("cat-3-cccc", 5, 0)]);

    [Fact]
    public void A_right_result_has_no_differences()
    {
        Assert.Empty(Reference.Differences(Result(30, 499_500, [.. Reference.Groups.Reverse()])));
    }

    [Fact]
    public void Every_wrong_figure_is_named()
    {
        StringsResult result = Result(31, 499_501,
        [
            new StringsGroup("cat-1-aaaa", 11, 12_345), // wrong rows
            new StringsGroup("cat-2-bbbb", 15, -701),   // wrong amount
            new StringsGroup("cat-9-zzzz", 1, 5),       // not in the reference; cat-3-cccc missing
        ]) with { Rows = 999 };
        IReadOnlyList<string> wrong = Reference.Differences(result);
        Assert.Contains("it loaded 999 rows; the table has 1,000", wrong);
        Assert.Contains("the sum of the id column is 499,501; the reference is 499,500", wrong);
        Assert.Contains("31 rows have a note starting with 'Überfällig:'; the reference has 30", wrong);
        Assert.Contains("category 'cat-1-aaaa' has 11 rows and an amount of 123.45; the reference has 10 rows and 123.45", wrong);
        Assert.Contains("category 'cat-2-bbbb' has 15 rows and an amount of -7.01; the reference has 15 rows and -7.00", wrong);
        Assert.Contains("category 'cat-9-zzzz' is not among the filtered rows' categories in the reference (1 rows)", wrong);
        Assert.Contains("category 'cat-3-cccc' (5 rows in the reference) is missing", wrong);
        Assert.Equal(7, wrong.Count);
    }

    [Fact]
    public void Past_five_wrong_groups_the_rest_are_counted()
    {
        StringsGroup[] many = [.. Enumerable.Range(0, 9).Select(i => new StringsGroup($"x{i}", 1, 1))];
        IReadOnlyList<string> wrong = Reference.Differences(Result(30, 499_500, many));
        Assert.Equal(6, wrong.Count);
        Assert.Equal("and 7 more wrong groups", wrong[^1]);
    }

    [Fact]
    public void The_group_table_groups_by_bytes_like_a_group_by_on_strings()
    {
        string[] keys = ["a", "b", "Straße", "Strasse", "日本", "", "a "];
        var table = new Utf8GroupTable();
        var expected = new Dictionary<string, (long Rows, long Cents)>(StringComparer.Ordinal);
        for (int i = 0; i < 10_000; i++)
        {
            string key = keys[(i * 7 + i / 3) % keys.Length];
            table.Add(Encoding.UTF8.GetBytes(key), i);
            expected[key] = expected.TryGetValue(key, out (long Rows, long Cents) sum) ? (sum.Rows + 1, sum.Cents + i) : (1, i);
        }

        Assert.Equal(StringsGroup.Sorted(expected.Select(p => new StringsGroup(p.Key, p.Value.Rows, p.Value.Cents))), table.ToGroups());
    }

    [Fact]
    public void The_group_table_merges_totals_added_several_rows_at_a_time_by_their_bytes()
    {
        // As the native group-by adds a dictionary index's totals: one key may come from two indices.
        var table = new Utf8GroupTable();
        table.Add("Straße"u8, 3, 700);
        table.Add(""u8, 2, -50);
        table.Add("Straße"u8, 4, 100);
        table.Add("b"u8, 1);
        Assert.Equal(StringsGroup.Sorted([new StringsGroup("Straße", 7, 800), new StringsGroup("", 2, -50), new StringsGroup("b", 1, 1)]), table.ToGroups());
    }

    [Fact]
    public void The_group_table_allocates_nothing_for_a_key_it_has_seen()
    {
        var table = new Utf8GroupTable();
        byte[][] keys = [.. Enumerable.Range(0, 3000).Select(i => Encoding.UTF8.GetBytes($"category-{i}-ü"))];
        foreach (byte[] key in keys)
        {
            table.Add(key, 1);
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 300_000; i++)
        {
            table.Add(keys[i % keys.Length], 2);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.All(table.ToGroups(), g => Assert.Equal(101, g.Rows));
    }

    [Fact]
    public void The_pause_listener_sees_every_collection_and_its_longest_pause()
    {
        using var listener = new GcPauseListener();
        int seen = listener.Collections;
        TimeSpan pausedBefore = GC.GetTotalPauseDuration();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        }

        TimeSpan paused = GC.GetTotalPauseDuration() - pausedBefore;
        Assert.True(listener.WaitForCollections(seen + 3, TimeSpan.FromSeconds(30)), $"saw {listener.Collections - seen} of 3 collections");
        Assert.True(listener.LongestPauseMs > 0, $"{listener.LongestPauseMs}");
        Assert.True(listener.LongestPauseMs <= listener.TotalPauseMs);

        // The runtime counts its pauses too, timed inside the collection (less of stopping and restarting the threads).
        Assert.True(paused > TimeSpan.Zero);
        Assert.False(listener.WaitForCollections(listener.Collections + 1, TimeSpan.FromMilliseconds(50)));
    }

    [Fact]
    public void A_meter_that_tracks_pauses_reports_a_forced_full_collection()
    {
        using var meter = PhaseMeter.Start(trackGcPauses: true);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        Assert.True(meter.Lap() > 0);
        PhaseTotals totals = meter.Stop();
        Assert.True(totals.Gen2 >= 1 && totals.Gen1 >= 1 && totals.Gen0 >= 1, totals.ToString());
        Assert.True(totals.LongestGcPauseMs > 0 && totals.TotalGcPauseMs > 0, totals.ToString());
        Assert.True(totals.Usage.UserSeconds + totals.Usage.SystemSeconds > 0, totals.ToString());
    }

    [Fact]
    public void A_meter_that_does_not_track_pauses_says_so()
    {
        using var meter = PhaseMeter.Start(trackGcPauses: false);
        PhaseTotals totals = meter.Stop();
        Assert.Equal(-1, totals.LongestGcPauseMs);
        Assert.Equal(-1, totals.TotalGcPauseMs);
    }

    private static StringsResult Result(long filtered, long idSum, StringsGroup[] groups) =>
        new(StringsSide.Managed, 1000, 1, 0.5, 0.1, 0.1, 0.01, 1, 0.1, 10, 0, 1 << 20, 0, 0, 0, 0, 0, filtered, idSum, groups);
}
