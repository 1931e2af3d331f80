using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheLeaseTests : LeakCheckedTest
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_lease_keeps_its_bytes_while_the_entry_is_replaced_removed_and_evicted(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using (var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1 }))
        {
            byte[] value = CacheTestData.Value(1, 1, 500);
            cache.Set(CacheTestData.Key(1), value);
            Assert.True(cache.TryGet(CacheTestData.Key(1), out NativeCacheLease replaced));
            cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 2, 500));

            cache.Set(CacheTestData.Key(2), CacheTestData.Value(2, 1, 700));
            Assert.True(cache.TryGet(CacheTestData.Key(2), out NativeCacheLease removed));
            Assert.True(cache.Remove(CacheTestData.Key(2)));

            cache.Set(CacheTestData.Key(3), CacheTestData.Value(3, 1, 900));
            Assert.True(cache.TryGet(CacheTestData.Key(3), out NativeCacheLease evicted));
            // Ten times the budget, each entry read once so that the main log fills and turns over
            // too: every segment goes, the leased ones included.
            for (int i = 10; i < 20_000; i++)
            {
                cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 1, 1000));
                if (cache.TryGet(CacheTestData.Key(i), out NativeCacheLease read))
                {
                    read.Dispose();
                }
            }

            Assert.Null(cache.GetBytes(CacheTestData.Key(3)));
            NativeCacheStatistics statistics = cache.GetStatistics();
            Assert.True(statistics.PinnedBytes > 0);
            Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);

            Assert.True(replaced.Span.SequenceEqual(value));
            Assert.True(CacheTestData.IsIntact(removed.Span, 2, out long version2) && version2 == 1);
            Assert.True(CacheTestData.IsIntact(evicted.Span, 3, out long version3) && version3 == 1);
            replaced.Dispose();
            removed.Dispose();
            evicted.Dispose();
            Assert.Equal(0, cache.GetStatistics().PinnedBytes);
        }
    }

    [Fact]
    public void A_lease_used_after_it_ends_throws_through_any_copy()
    {
        using var cache = new NativeCache(4 << 20);
        cache.Set("k"u8, [1, 2, 3]);
        Assert.True(cache.TryGet("k"u8, out NativeCacheLease lease));
        NativeCacheLease copy = lease;
        copy.Dispose();
        Assert.False(lease.IsOpen);
        Assert.False(copy.IsOpen);
        AssertEnded(lease);
        AssertEnded(copy);
        lease.Dispose();
        copy.Dispose();
        // The pin was dropped once: the cache can be disposed.
    }

    // Each member of an ended lease throws ObjectDisposedException saying the lease ended, not that
    // anything was freed (a ref struct cannot go into a lambda).
    private static void AssertEnded(NativeCacheLease lease)
    {
        int thrown = 0;
        try
        {
            _ = lease.Length;
        }
        catch (ObjectDisposedException e)
        {
            SaysLeaseEnded(e);
            thrown++;
        }

        try
        {
            _ = lease.Span;
        }
        catch (ObjectDisposedException e)
        {
            SaysLeaseEnded(e);
            thrown++;
        }

        try
        {
            _ = lease.Read<byte>();
        }
        catch (ObjectDisposedException e)
        {
            SaysLeaseEnded(e);
            thrown++;
        }

        Assert.Equal(3, thrown);
    }

    private static void SaysLeaseEnded(ObjectDisposedException e)
    {
        DisposedMessages.SaysEnded(e, "NativeCacheLease", "This NativeCacheLease");
        Assert.Contains("look the key up again for a new lease", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Dispose_with_a_lease_open_refuses_and_names_the_leases_then_succeeds_once_they_end()
    {
        var cache = new NativeCache(4 << 20);
        cache.Set("a"u8, [1]);
        cache.Set("b"u8, [2]);
        Assert.True(cache.TryGet("a"u8, out NativeCacheLease first));
        Assert.True(cache.TryGet("b"u8, out NativeCacheLease second));
        var error = Assert.Throws<InvalidOperationException>(cache.Dispose);
        Assert.Contains("2 open lease", error.Message, StringComparison.Ordinal);
        // Nothing was freed: the cache works on.
        Assert.Equal([1], cache.GetBytes("a"u8));
        Assert.Equal([2], second.Span.ToArray());
        first.Dispose();
        second.Dispose();
        cache.Dispose();
        cache.Dispose();
        DisposedMessages.AssertDisposed("NativeCache", () => cache.Set("a"u8, [1]));
        DisposedMessages.AssertDisposed("NativeCache", () => cache.TryGet("a"u8, out _));
        DisposedMessages.AssertDisposed("NativeCache", () => cache.Remove("a"u8));
        DisposedMessages.AssertDisposed("NativeCache", () => cache.ContainsKey("a"u8));
        DisposedMessages.AssertDisposed("NativeCache", () => cache.TryCopyTo("a"u8, new byte[1], out _));
        DisposedMessages.AssertDisposed("NativeCache", cache.Clear);
        DisposedMessages.AssertDisposed("NativeCache", cache.RemoveExpired);
        DisposedMessages.AssertDisposed("NativeCache", () => cache.GetStatistics());
        DisposedMessages.AssertDisposed("NativeCache", () => cache.GetOrAdd("a"u8, 0, static (_, _, w) => w.Write<byte>([1])));
    }

    [Fact]
    public void Leases_that_pin_the_whole_budget_make_a_write_fail_with_the_pinned_bytes_named()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 1 << 20, ShardCount = 1 });
        InvalidOperationException? refused = PinAndWrite(cache, 0, depth: 400);
        Assert.NotNull(refused);
        Assert.Contains("open leases", refused.Message, StringComparison.Ordinal);
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);

        // With the leases gone the same write fits.
        cache.Set("after"u8, new byte[1000]);
        Assert.NotNull(cache.GetBytes("after"u8));
    }

    // Writes a segment's worth of entries and leases one of them, level after level (a lease is a
    // ref struct: the stack holds them), until the writes at the bottom find every byte pinned.
    private static InvalidOperationException? PinAndWrite(NativeCache cache, int next, int depth)
    {
        const int PerLevel = 8;
        try
        {
            for (int i = 0; i < PerLevel; i++)
            {
                cache.Set(CacheTestData.Key(next + i), new byte[1000]);
                Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
            }
        }
        catch (InvalidOperationException e)
        {
            Assert.True(cache.GetStatistics().PinnedBytes > (1 << 20) / 2);
            return e;
        }

        if (depth == 0 || !cache.TryGet(CacheTestData.Key(next + PerLevel - 1), out NativeCacheLease lease))
        {
            return null;
        }

        using (lease)
        {
            return PinAndWrite(cache, next + PerLevel, depth - 1);
        }
    }
}
