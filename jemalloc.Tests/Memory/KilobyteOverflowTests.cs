using jemalloc.Memory;

namespace jemalloc.Tests.Memory;

/// <summary>A <c>/proc</c> figure in kB whose byte count passes <see cref="ulong.MaxValue"/> saturates instead of wrapping round to a small one.</summary>
public sealed class KilobyteOverflowTests
{
    [Theory]
    [InlineData(18_014_398_509_481_984UL)] // 2^54 kB = 2^64 bytes: wrapped to 0
    [InlineData(18_014_398_509_481_985UL)] // wrapped to 1 KiB
    [InlineData(ulong.MaxValue)]
    public void A_kilobyte_figure_too_big_for_bytes_reads_as_the_most_bytes(ulong kilobytes) =>
        Assert.Equal(ulong.MaxValue, LinuxMemoryLimits.FindKilobytes($"MemTotal: 1 kB\nMemAvailable: {kilobytes} kB\n", "MemAvailable:"));

    [Fact]
    public void The_largest_figure_that_fits_is_exact() =>
        Assert.Equal(ulong.MaxValue / 1024 * 1024, LinuxMemoryLimits.FindKilobytes($"MemAvailable: {ulong.MaxValue / 1024} kB\n", "MemAvailable:"));
}
