using jemalloc.Tests.Support;
using jemalloc.Tests.Tuning;

namespace jemalloc.Tests.Caching;

/// <summary>
/// <see cref="NativeCacheOptions.HugePages"/>: a cache that asks for huge pages gets segments of a whole huge
/// page where each shard holds enough of them, advised as such (smaller segments would never be); one that
/// does not ask stays on 4 KiB pages whatever the huge-page policy chooses for arrays. In the settings
/// collection: the policy's selection is process-wide.
/// </summary>
[Collection(GlobalSettings.Name)]
public sealed unsafe class NativeCacheHugePageTests
{
    private const long MiB = 1 << 20;

    [Fact]
    public void A_cache_asking_for_huge_pages_uses_segments_of_a_huge_page_where_every_shard_holds_enough()
    {
        // 8 shards of 128 MiB: 1 MiB segments on 4 KiB pages; 2 MiB segments with huge pages.
        using (var plain = new NativeCache(new NativeCacheOptions { BudgetBytes = 1024 * MiB, ShardCount = 8, HugePages = false }))
        {
            Assert.Equal(MiB, plain.SegmentBytes);
        }

        using (var huge = new NativeCache(new NativeCacheOptions { BudgetBytes = 1024 * MiB, ShardCount = 8, HugePages = true }))
        {
            Assert.Equal(2 * MiB, huge.SegmentBytes);
        }

        // 8 shards of 64 MiB hold 32 segments of 2 MiB, fewer than HugeSegmentsPerShard: small segments stay.
        using var crowded = new NativeCache(new NativeCacheOptions { BudgetBytes = 512 * MiB, ShardCount = 8, HugePages = true });
        Assert.Equal(512 * 1024, crowded.SegmentBytes);
    }

    [Theory]
    [InlineData(HugePageSelection.Always)]
    [InlineData(HugePageSelection.Never)]
    public void Left_unset_the_option_means_4_KiB_pages_whatever_the_huge_page_policy(HugePageSelection selection)
    {
        // The policy chooses for arrays; a cache trades room for speed with huge segments, so it asks only when told.
        using var scope = HugePageSelectionScope.Set(selection);
        using var big = new NativeCache(new NativeCacheOptions { BudgetBytes = 1024 * MiB, ShardCount = 8 });
        Assert.Equal(MiB, big.SegmentBytes);
    }

    [Fact]
    public void A_huge_page_cache_s_values_live_in_memory_advised_for_huge_pages_on_this_machine()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 256 * MiB, ShardCount = 1, HugePages = true });
        byte[] value = new byte[1000];
        for (int key = 0; key < 4_000; key++)
        {
            cache.Set(key, value);
        }

        Assert.True(cache.TryGet(1_234, out NativeCacheLease lease));
        using (lease)
        {
            fixed (byte* at = lease.Span)
            {
                nint segment = (nint)at & ~(nint)(2 * MiB - 1);
                if (Smaps.HugePagesOnRequest)
                {
                    Assert.True(Smaps.AdvisedHuge(segment, 2 * MiB), "The segment holding the value is not advised for huge pages.");
                }
                else
                {
                    Assert.False(Smaps.AnyAdvisedHuge(segment, 2 * MiB), "Memory was advised for huge pages on a host that offers none.");
                }
            }
        }
    }
}
