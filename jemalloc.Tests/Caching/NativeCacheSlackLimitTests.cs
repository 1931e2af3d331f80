using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// The edges of an in-place shrink: slack of exactly the most an entry can record goes in place, one
/// eighth more appends; the longest key and the empty key; and the entries after such shrinks are all
/// still found by the walk of their segments.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheSlackLimitTests : LeakCheckedTest
{
    private const int MaxSlack = 262_136;

    [Theory]
    [InlineData(65_536, false)]
    [InlineData(65_536, true)]
    [InlineData(0, false)]
    [InlineData(0, true)]
    [InlineData(8, true)]
    public void A_shrink_leaving_the_most_slack_goes_in_place_and_one_eighth_more_appends(int keyLength, bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 64 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        byte[] key = new byte[keyLength];
        Random.Shared.NextBytes(key);
        byte[] neighbour = CacheTestData.Key(-1);
        cache.Set(neighbour, CacheTestData.Value(-1, 1, 64));

        // Exactly the most slack: in place, the slack all dead.
        cache.Set(key, Fill(MaxSlack + 100, 1));
        cache.Set(key, Fill(100, 2));
        NativeCacheStatistics atLimit = cache.GetStatistics();
        Assert.Equal(1, atLimit.ReplacedInPlace);
        Assert.Equal(MaxSlack, atLimit.DeadBytes);
        Assert.True(cache.GetBytes(key).AsSpan().SequenceEqual(Fill(100, 2)));

        // Back to the full size: in place, no slack left.
        cache.Set(key, Fill(MaxSlack + 100, 3));
        NativeCacheStatistics regrown = cache.GetStatistics();
        Assert.Equal(2, regrown.ReplacedInPlace);
        Assert.Equal(0, regrown.DeadBytes);

        // Nothing from the full size leaves more slack than an entry records: appended.
        cache.Set(key, []);
        NativeCacheStatistics empty = cache.GetStatistics();
        Assert.Equal(2, empty.ReplacedInPlace);
        Assert.Equal(Align(16 + keyLength + MaxSlack + 100), empty.DeadBytes);
        Assert.True(cache.TryGet(key, out NativeCacheLease lease));
        using (lease)
        {
            Assert.Equal(0, lease.Length);
        }

        // One eighth past the most slack: appended, the old entry all dead.
        cache.Set(key, Fill(MaxSlack + 108, 4));
        long before = cache.GetStatistics().DeadBytes;
        cache.Set(key, Fill(100, 5));
        NativeCacheStatistics past = cache.GetStatistics();
        Assert.Equal(2, past.ReplacedInPlace);
        Assert.Equal(before + Align(16 + keyLength + MaxSlack + 108), past.DeadBytes);
        Assert.True(cache.GetBytes(key).AsSpan().SequenceEqual(Fill(100, 5)));

        // The walk still finds both entries, and the neighbour is intact.
        cache.RemoveExpired();
        Assert.Equal(2, cache.Count);
        Assert.Equal(2, cache.GetStatistics().Entries);
        Assert.Equal(keyLength + 100 + 8 + 64, cache.GetStatistics().KeyValueBytes);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(neighbour), -1, out long version) && version == 1);
        cache.Clear();
        Assert.Equal(2, cache.GetStatistics().Cleared);
    }

    private static long Align(long bytes) => (bytes + 7) & ~7L;

    private static byte[] Fill(int length, byte seed)
    {
        byte[] value = new byte[length];
        for (int i = 0; i < value.Length; i++)
        {
            value[i] = (byte)(seed + (i * 31));
        }

        return value;
    }
}
