using jemalloc.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Replacements in place and the reclaim of dead bytes: a value that fits its old entry's bytes goes
/// over them unless a lease is open on their segment, and segments mostly dead are reclaimed by moving
/// their few live entries rather than by evicting live ones.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheDeadSpaceTests : LeakCheckedTest
{
    private const int Entry300 = 328;   // 16-byte header, 8-byte key, 300-byte value
    private const int Entry100 = 128;   // the same with a 100-byte value

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void An_update_under_an_open_lease_appends_and_the_lease_keeps_the_old_bytes_then_updates_go_in_place(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        byte[] key = CacheTestData.Key(7);
        byte[] first = CacheTestData.Value(7, 1, 300);
        cache.Set(key, first);
        NativeCacheStatistics written = cache.GetStatistics();
        Assert.Equal(0, written.DeadBytes);

        Assert.True(cache.TryGet(key, out NativeCacheLease lease));
        NativeCacheStatistics appended;
        using (lease)
        {
            // The lease pins the old bytes' segment: the update must not write over them.
            cache.Set(key, CacheTestData.Value(7, 2, 300));
            appended = cache.GetStatistics();
            Assert.Equal(0, appended.ReplacedInPlace);
            Assert.Equal(1, appended.Replaced);
            Assert.Equal(Entry300, appended.DeadBytes);
            Assert.True(lease.Span.SequenceEqual(first));
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 7, out long version) && version == 2);
            Assert.True(lease.Span.SequenceEqual(first));
        }

        // The lease is over: the same size goes over the entry, taking no new bytes and leaving none dead.
        cache.Set(key, CacheTestData.Value(7, 3, 300));
        NativeCacheStatistics inPlace = cache.GetStatistics();
        Assert.Equal(1, inPlace.ReplacedInPlace);
        Assert.Equal(2, inPlace.Replaced);
        Assert.Equal(appended.DeadBytes, inPlace.DeadBytes);
        Assert.Equal(appended.AllocatedBytes, inPlace.AllocatedBytes);
        Assert.Equal(8 + 300, inPlace.KeyValueBytes);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 7, out long third) && third == 3);

        // A shorter value goes in place too; what it leaves of the old bytes counts as dead.
        cache.Set(key, CacheTestData.Value(7, 4, 100));
        NativeCacheStatistics shorter = cache.GetStatistics();
        Assert.Equal(2, shorter.ReplacedInPlace);
        Assert.Equal(8 + 100, shorter.KeyValueBytes);
        Assert.Equal(appended.DeadBytes + (Entry300 - Entry100), shorter.DeadBytes);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 7, out long fourth) && fourth == 4);

        // Back up to the slot's full size: still in place, the slack is used again.
        cache.Set(key, CacheTestData.Value(7, 5, 300));
        NativeCacheStatistics regrown = cache.GetStatistics();
        Assert.Equal(3, regrown.ReplacedInPlace);
        Assert.Equal(appended.DeadBytes, regrown.DeadBytes);

        // Longer than the slot (336 bytes against 328): appended; the whole old entry is dead.
        cache.Set(key, CacheTestData.Value(7, 6, 310));
        NativeCacheStatistics longer = cache.GetStatistics();
        Assert.Equal(3, longer.ReplacedInPlace);
        Assert.Equal(regrown.DeadBytes + Entry300, longer.DeadBytes);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 7, out long sixth) && sixth == 6);
        Assert.Equal(1, cache.Count);
    }

    [Fact]
    public void An_update_does_not_go_in_place_under_a_lease_on_another_key_of_the_same_segment()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        cache.Set(CacheTestData.Key(1), CacheTestData.Value(1, 1, 200));
        cache.Set(CacheTestData.Key(2), CacheTestData.Value(2, 1, 200));
        Assert.True(cache.TryGet(CacheTestData.Key(1), out NativeCacheLease lease));
        using (lease)
        {
            cache.Set(CacheTestData.Key(2), CacheTestData.Value(2, 2, 200));
            Assert.Equal(0, cache.GetStatistics().ReplacedInPlace);
        }

        cache.Set(CacheTestData.Key(2), CacheTestData.Value(2, 3, 200));
        Assert.Equal(1, cache.GetStatistics().ReplacedInPlace);
    }

    [Fact]
    public void An_update_that_changes_how_the_entry_expires_is_appended()
    {
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1, TimeProvider = time, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        byte[] key = CacheTestData.Key(3);
        cache.Set(key, CacheTestData.Value(3, 1, 200));
        cache.Set(key, CacheTestData.Value(3, 2, 100), new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Assert.Equal(0, cache.GetStatistics().ReplacedInPlace);
        // Same lifetime, same TTL log: in place, with the new deadline.
        cache.Set(key, CacheTestData.Value(3, 3, 100), new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
        Assert.Equal(1, cache.GetStatistics().ReplacedInPlace);
        time.Advance(TimeSpan.FromSeconds(9));
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(key), 3, out long version) && version == 3);
        time.Advance(TimeSpan.FromSeconds(2));
        Assert.Null(cache.GetBytes(key));
        Assert.Equal(1, cache.GetStatistics().Expired);
    }

    [Fact]
    public void Same_size_updates_of_the_same_keys_take_no_new_memory()
    {
        const int Keys = 2000;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        for (int i = 0; i < Keys; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 0, 200));
        }

        NativeCacheStatistics filled = cache.GetStatistics();
        for (int round = 1; round <= 50; round++)
        {
            for (int i = 0; i < Keys; i++)
            {
                cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, round, 200));
            }
        }

        NativeCacheStatistics updated = cache.GetStatistics();
        Assert.Equal(Keys * 50L, updated.ReplacedInPlace);
        Assert.Equal(0, updated.DeadBytes);
        Assert.Equal(Keys, updated.Entries);
        Assert.Equal(filled.AllocatedBytes, updated.AllocatedBytes);
        Assert.Equal(filled.OverheadBytesPerEntry, updated.OverheadBytesPerEntry);
        for (int i = 0; i < Keys; i++)
        {
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(i)), i, out long version) && version == 50);
        }
    }

    [Fact]
    public void Updates_that_cannot_go_in_place_leave_dead_bytes_that_are_reclaimed_without_evicting_live_entries()
    {
        // At most 42% of the budget live; every round grows every value by 8 bytes, so each update
        // appends and leaves the old entry dead, and the budget fills with dead bytes over and over. The
        // keys come in a new order each round, so the dead bytes are spread among live ones. Nothing is
        // read, so a FIFO reclaim would evict: every entry staying, within the budget, means the dead
        // bytes were reclaimed instead.
        const int Keys = 2000;
        const int Rounds = 40;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        for (int round = 0; round < Rounds; round++)
        {
            int length = 100 + (8 * round);
            for (int n = 0; n < Keys; n++)
            {
                int i = (int)(((n * 7919L) + (round * 131L)) % Keys);
                cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, round, length));
            }

            NativeCacheStatistics statistics = cache.GetStatistics();
            Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes, statistics.ToString());
            Assert.Equal(Keys, statistics.Entries);
        }

        NativeCacheStatistics end = cache.GetStatistics();
        Assert.Equal(0, end.EvictedForCapacity);
        Assert.True(end.SegmentsCompacted > 0, end.ToString());
        Assert.Equal(0, end.ReplacedInPlace);
        // 39 rounds appended 39 x 2,000 entries of 136 to 440 bytes (over 20 MiB) into a 2 MiB budget:
        // nearly all of it was given back dead.
        Assert.True(end.DeadBytesReclaimed > 16L << 20, end.ToString());
        // Dead bytes wait until room is needed (they displace nothing before); the rest of what is held
        // per entry, above its key and value, is its header and padding (about 20 bytes), its share of
        // the tables (20 here) and of the segments' unused ends and spare (about 30).
        double liveOverhead = (double)(end.AllocatedBytes - end.DeadBytes - end.KeyValueBytes) / end.Entries;
        Assert.True(liveOverhead < 96, $"{liveOverhead:F1} bytes per entry; {end}");
        for (int i = 0; i < Keys; i++)
        {
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(i)), i, out long version) && version == Rounds - 1);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_segment_a_lease_pins_keeps_its_bytes_while_dead_segments_around_it_are_compacted(bool checkedMode)
    {
        using CheckedModeScope mode = checkedMode ? CheckedModeScope.On() : CheckedModeScope.Off();
        const int Keys = 1500;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 2 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        for (int i = 0; i < Keys; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 0, 100));
        }

        // Key 0's segment is pinned; every other entry in it dies at the first growing round, so it is
        // the deadest segment there is, and must be left alone.
        Assert.True(cache.TryGet(CacheTestData.Key(0), out NativeCacheLease lease));
        using (lease)
        {
            byte[] seen = lease.Span.ToArray();
            for (int round = 1; round < 30; round++)
            {
                for (int i = 0; i < Keys; i++)
                {
                    cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, round, 100 + (8 * round)));
                }

                Assert.True(lease.Span.SequenceEqual(seen));
            }

            NativeCacheStatistics statistics = cache.GetStatistics();
            Assert.True(statistics.SegmentsCompacted > 0, statistics.ToString());
            Assert.Equal(0, statistics.EvictedForCapacity);
            Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes, statistics.ToString());
            Assert.True(CacheTestData.IsIntact(lease.Span, 0, out long version) && version == 0);
        }

        Assert.Equal(0, cache.GetStatistics().PinnedBytes);
        Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(0)), 0, out long last) && last == 29);
    }

    [Fact]
    public void Readers_never_see_a_value_torn_by_a_write_in_place()
    {
        const int Keys = 32;
        const int Rounds = 3000;
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 4 << 20, ShardCount = 1, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        for (int i = 0; i < Keys; i++)
        {
            cache.Set(CacheTestData.Key(i), CacheTestData.Value(i, 0, 1024));
        }

        int torn = 0;
        int writersDone = 0;
        var threads = new List<Thread>();
        for (int w = 0; w < 2; w++)
        {
            int writer = w;
            threads.Add(new Thread(() =>
            {
                byte[] value = new byte[1024];
                for (int round = 1; round <= Rounds; round++)
                {
                    for (int i = writer; i < Keys; i += 2)
                    {
                        CacheTestData.Fill(value, i, round);
                        cache.Set(CacheTestData.Key(i), value);
                    }
                }

                Interlocked.Increment(ref writersDone);
            }));
        }

        // One reader copies under the shard's lock; the other reads through leases and reads the
        // same span twice, which must not change while the lease is open.
        threads.Add(new Thread(() =>
        {
            byte[] copy = new byte[1024];
            for (int n = 0; Volatile.Read(ref writersDone) < 2 || n < 1000; n++)
            {
                int i = n % Keys;
                if (!cache.TryCopyTo(CacheTestData.Key(i), copy, out int written) || written != 1024 || !CacheTestData.IsIntact(copy, i, out _))
                {
                    Interlocked.Increment(ref torn);
                }
            }
        }));
        threads.Add(new Thread(() =>
        {
            for (int n = 0; Volatile.Read(ref writersDone) < 2 || n < 1000; n++)
            {
                int i = n % Keys;
                if (!cache.TryGet(CacheTestData.Key(i), out NativeCacheLease lease))
                {
                    Interlocked.Increment(ref torn);
                    continue;
                }

                using (lease)
                {
                    byte[] first = lease.Span.ToArray();
                    Thread.Yield();
                    if (!CacheTestData.IsIntact(first, i, out _) || !lease.Span.SequenceEqual(first))
                    {
                        Interlocked.Increment(ref torn);
                    }
                }
            }
        }));

        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Assert.Equal(0, torn);
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.ReplacedInPlace > 0, statistics.ToString());
        Assert.Equal(0, statistics.EvictedForCapacity);
        for (int i = 0; i < Keys; i++)
        {
            Assert.True(CacheTestData.IsIntact(cache.GetBytes(CacheTestData.Key(i)), i, out long version) && version == Rounds);
        }
    }
}
