using jemalloc.Simd;

namespace jemalloc.Tests.Simd;

/// <summary>The last-level cache size the automatic fill policy starts from: read from the OS, parsed exactly.</summary>
public sealed class LastLevelCacheTests
{
    [Theory]
    [InlineData("32768K", 32L << 20)]
    [InlineData("1024K\n", 1L << 20)]
    [InlineData("  8M ", 8L << 20)]
    [InlineData("1G", 1L << 30)]
    [InlineData("65536", 65536L)]
    public void Sysfs_sizes_parse_to_bytes(string text, long bytes) => Assert.Equal(bytes, LastLevelCache.ParseSysfsSize(text));

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("K")]
    [InlineData("-5K")]
    [InlineData("12 K")]
    [InlineData("abcK")]
    [InlineData("0")]
    [InlineData("99999999999999999999K")]
    [InlineData("9999999999999G")]
    public void Text_that_is_not_a_size_parses_to_nothing(string? text) => Assert.Null(LastLevelCache.ParseSysfsSize(text));

    [Fact]
    public void The_size_is_read_once_and_is_plausible_with_its_source_named()
    {
        long bytes = FillPolicy.LastLevelCacheBytes;
        Assert.InRange(bytes, 64L * 1024, 4L << 30);
        Assert.Equal(bytes, LastLevelCache.Bytes);
        Assert.False(string.IsNullOrWhiteSpace(LastLevelCache.Source));
        Assert.Contains(LastLevelCache.Source, FillPolicy.Describe(), StringComparison.Ordinal);
    }
}
