
namespace jemalloc.Cli.Tests.Verbs;

public class MemoryCheckTests
{
    private const long GB = 1_000_000_000;

    [Fact]
    public void A_run_that_fits_passes() =>
        MemoryCheck.EnsureFits("array", new MemoryNeed(2 * GB, 2 * GB, "test"), availableBytes: 20 * GB, managedLimitBytes: 20 * GB);

    [Fact]
    public void The_larger_side_counts_because_native_and_managed_are_never_alive_together() =>
        MemoryCheck.EnsureFits("hugearray", new MemoryNeed(16_800_000_000, 8_589_934_364, "test"), availableBytes: 20 * GB, managedLimitBytes: 24 * GB);

    [Fact]
    public void A_run_bigger_than_available_memory_is_refused_with_both_figures()
    {
        var e = Assert.Throws<InsufficientMemoryException>(() =>
            MemoryCheck.EnsureFits("hugearray", new MemoryNeed(32_768_000_000, 17_179_869_528, "a HugeArray<UInt64> of 4,096,000,000 elements"), 24 * GB, 24 * GB));
        Assert.Contains("needs about 32.8 GB", e.Message, StringComparison.Ordinal);
        Assert.Contains("24.0 GB", e.Message, StringComparison.Ordinal);
        Assert.Contains("HugeArray<UInt64>", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_headroom_is_kept_free() =>
        Assert.Throws<InsufficientMemoryException>(() =>
            MemoryCheck.EnsureFits("array", new MemoryNeed(10 * GB, 0, "test"), availableBytes: 10 * GB, managedLimitBytes: 20 * GB));

    [Fact]
    public void A_managed_side_above_the_garbage_collector_limit_is_refused()
    {
        var e = Assert.Throws<InsufficientMemoryException>(() =>
            MemoryCheck.EnsureFits("array", new MemoryNeed(1 * GB, 4 * GB, "test"), availableBytes: 20 * GB, managedLimitBytes: 3 * GB));
        Assert.Contains("garbage collector's limit", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Unknown_available_memory_checks_only_the_managed_limit() =>
        MemoryCheck.EnsureFits("array", new MemoryNeed(100 * GB, 1 * GB, "test"), availableBytes: null, managedLimitBytes: 20 * GB);

    [Fact]
    public void This_machine_reports_its_available_memory_and_managed_limit()
    {
        Assert.True(MemoryCheck.AvailableBytes() > 0);
        Assert.True(MemoryCheck.ManagedLimitBytes() > 0);
    }
}
