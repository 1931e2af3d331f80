using System.Runtime.InteropServices;
using System.Text.Json;

namespace jemalloc.Tests.Native;

public unsafe class StatisticsTests
{
    [Fact]
    public void A_snapshot_is_consistent()
    {
        JemStatistics stats = Jem.GetStatistics();
        Assert.True(stats.Allocated > 0);
        Assert.True(stats.Active >= stats.Allocated);
        Assert.True(stats.Metadata > 0);
        Assert.True(stats.Resident > 0);
        Assert.True(stats.Mapped >= stats.Active);
        Assert.Equal(Jem.GetMallctl<nuint>("stats.retained"), (nuint)stats.Retained);
    }

    [Fact]
    public void Refreshing_advances_the_epoch()
    {
        ulong epoch = MallctlKeys.Epoch.Get();
        ulong refreshed = Jem.RefreshStatistics();
        Assert.True(refreshed > epoch);
        Assert.True(MallctlKeys.Epoch.Get() >= refreshed);
    }

    [Fact]
    public void The_thread_counters_move_with_this_threads_allocations()
    {
        // thread.allocated/deallocated count only the calling thread, so parallel tests cannot disturb them.
        ulong allocated = MallctlKeys.Thread.Allocated.Get();
        ulong deallocated = MallctlKeys.Thread.Deallocated.Get();
        void* memory = Jem.Mallocx(1 << 20);
        Assert.Equal(allocated + Jem.Sallocx(memory), MallctlKeys.Thread.Allocated.Get());
        Jem.Dallocx(memory);
        Assert.Equal(deallocated + (1 << 20), MallctlKeys.Thread.Deallocated.Get());
    }

    [Fact]
    public void The_text_report_has_jemalloc_sections()
    {
        string text = Jem.GetStatsText();
        Assert.Contains("___ Begin jemalloc statistics ___", text, StringComparison.Ordinal);
        Assert.Contains("--- End jemalloc statistics ---", text, StringComparison.Ordinal);
        Assert.Contains("Version: \"5.3.0-", text, StringComparison.Ordinal);
        Assert.Contains("Allocated: ", text, StringComparison.Ordinal);

        // Leaving sections out makes the report shorter; the general section ("g") holds the version.
        string brief = Jem.GetStatsText("gmdablxeh");
        Assert.DoesNotContain("Version:", brief, StringComparison.Ordinal);
        Assert.True(brief.Length < text.Length);
    }

    [Fact]
    public void The_json_report_parses()
    {
        using JsonDocument document = JsonDocument.Parse(Jem.GetStatsJson());
        JsonElement jemalloc = document.RootElement.GetProperty("jemalloc");
        Assert.StartsWith("5.3.0-", jemalloc.GetProperty("version").GetString(), StringComparison.Ordinal);
        Assert.True(jemalloc.GetProperty("stats").GetProperty("allocated").GetUInt64() > 0);

        using JsonDocument withoutArenas = JsonDocument.Parse(Jem.GetStatsJson("a"));
        Assert.True(withoutArenas.RootElement.GetProperty("jemalloc").TryGetProperty("stats", out _));
        using JsonDocument explicitJ = JsonDocument.Parse(Jem.GetStatsText("Jbl"));
        Assert.True(explicitJ.RootElement.TryGetProperty("jemalloc", out _));
    }

    [Theory]
    [InlineData("z")]
    [InlineData("J ")]
    [InlineData("é")]
    public void Unknown_report_options_are_rejected(string options)
    {
        Assert.Equal("options", Assert.Throws<ArgumentException>(() => Jem.GetStatsText(options)).ParamName);
        Assert.Throws<ArgumentException>(() => Jem.GetStatsJson(options));
        Assert.Throws<ArgumentException>(() => Jem.PrintStats(options));
    }

    [Fact]
    public void The_raw_print_passes_the_report_to_the_callback()
    {
        long bytes = 0;
        GCHandle handle = GCHandle.Alloc(new Counter());
        try
        {
            Jem.MallocStatsPrint(&Counter.Count, (void*)GCHandle.ToIntPtr(handle), "J");
            bytes = ((Counter)handle.Target!).Bytes;
        }
        finally
        {
            handle.Free();
        }

        Assert.True(bytes > 1000);
    }

    private sealed class Counter
    {
        public long Bytes;

        [UnmanagedCallersOnly]
        public static void Count(void* state, byte* text)
        {
            ((Counter)GCHandle.FromIntPtr((nint)state).Target!).Bytes += MemoryMarshal.CreateReadOnlySpanFromNullTerminated(text).Length;
        }
    }
}
