using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

/// <summary>
/// The slack an in-place shrink leaves is dead once: when the shrunk entry itself dies (removed, replaced
/// by an append, dropped as expired) only its remaining bytes join the dead ones, so the cache's dead
/// bytes are exactly the old entry's bytes, as if it had never shrunk.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheSlackAccountingTests : LeakCheckedTest
{
    public enum Death
    {
        Removed,
        ReplacedByALongerValue,
        Expired,
    }

    [Theory]
    [InlineData(Death.Removed, false)]
    [InlineData(Death.Removed, true)]
    [InlineData(Death.ReplacedByALongerValue, false)]
    [InlineData(Death.ReplacedByALongerValue, true)]
    [InlineData(Death.Expired, false)]
    [InlineData(Death.Expired, true)]
    public void A_shrunk_entry_that_dies_counts_its_bytes_as_dead_once(Death death, bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        long unshrunk = DeadBytesAfter(death, shrinkFirst: false, out _);
        long shrunk = DeadBytesAfter(death, shrinkFirst: true, out NativeCacheStatistics statistics);
        Assert.Equal(1, statistics.ReplacedInPlace);
        Assert.Equal(unshrunk, shrunk);
        Assert.True(statistics.DeadBytes <= statistics.AllocatedBytes);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Many_shrink_and_grow_cycles_then_a_removal_leave_the_entry_dead_once(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        long reference = DeadBytesAfter(Death.Removed, shrinkFirst: false, out _);
        using var cache = NewCache(new FakeTimeProvider());
        byte[] key = CacheTestData.Key(5);
        cache.Set(key, CacheTestData.Value(5, 0, 300));
        for (int cycle = 1; cycle <= 50; cycle++)
        {
            // Down to nothing, part way back, back to exactly the old size.
            cache.Set(key, ReadOnlySpan<byte>.Empty);
            Assert.True(cache.TryGet(key, out NativeCacheLease empty));
            using (empty)
            {
                Assert.Equal(0, empty.Length);
            }

            cache.Set(key, CacheTestData.Value(5, cycle, 17 + cycle));
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 5, out long version) && version == cycle);
            cache.Set(key, CacheTestData.Value(5, cycle, 300));
        }

        NativeCacheStatistics before = cache.GetStatistics();
        Assert.Equal(150, before.ReplacedInPlace);
        Assert.Equal(0, before.DeadBytes);
        cache.Set(key, ReadOnlySpan<byte>.Empty);
        Assert.True(cache.Remove(key));
        Assert.Equal(reference, cache.GetStatistics().DeadBytes);
        Assert.Equal(0, cache.Count);
    }

    // Writes a 300-byte value (shrunk in place to 100 bytes if asked), lets it die, and reads the dead bytes.
    private static long DeadBytesAfter(Death death, bool shrinkFirst, out NativeCacheStatistics statistics)
    {
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = NewCache(time);
        byte[] key = CacheTestData.Key(9);
        NativeCacheEntryOptions expiry = death == Death.Expired
            ? new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) }
            : default;
        cache.Set(key, CacheTestData.Value(9, 1, 300), expiry);
        if (shrinkFirst)
        {
            cache.Set(key, CacheTestData.Value(9, 2, 100), expiry);
        }

        switch (death)
        {
            case Death.Removed:
                Assert.True(cache.Remove(key));
                break;
            case Death.ReplacedByALongerValue:
                cache.Set(key, CacheTestData.Value(9, 3, 400));
                Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 9, out long version) && version == 3);
                break;
            case Death.Expired:
                time.Advance(TimeSpan.FromSeconds(11));
                Assert.Null(cache.GetBytes(key));
                break;
        }

        statistics = cache.GetStatistics();
        return statistics.DeadBytes;
    }

    private static NativeCache NewCache(TimeProvider time) => new(new NativeCacheOptions
    {
        BudgetBytes = 2 << 20,
        ShardCount = 1,
        TimeProvider = time,
        ExpirationScanInterval = Timeout.InfiniteTimeSpan,
    });
}
