using System.Buffers;
using jemalloc.Caching;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>GetOrAdd's flights: one per key (not per hash), and a waiter gets the value its flight produced.</summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheFlightTests : LeakCheckedTest
{
    [Fact]
    public void Two_keys_with_one_hash_have_flights_of_their_own()
    {
        var flights = new CacheFlights();
        const ulong SameHash = 42;
        CacheFlight a = flights.Join([1, 2, 3], SameHash, asynchronous: true, owned: null, out bool aFirst);
        CacheFlight b = flights.Join([9], SameHash, asynchronous: true, owned: null, out bool bFirst);
        CacheFlight c = flights.Join([1, 2, 3, 4], SameHash, asynchronous: true, owned: null, out bool cFirst);
        Assert.True(aFirst);
        Assert.True(bFirst);
        Assert.True(cFirst);
        Assert.NotSame(a, b);
        Assert.NotSame(a, c);

        CacheFlight aAgain = flights.Join([1, 2, 3], SameHash, asynchronous: true, owned: null, out bool aAgainFirst);
        Assert.Same(a, aAgain);
        Assert.False(aAgainFirst);
        CacheFlight bAgain = flights.Join([9], SameHash, asynchronous: true, owned: null, out bool bAgainFirst);
        Assert.Same(b, bAgain);
        Assert.False(bAgainFirst);

        // Leaving from the middle of the chain keeps the others joinable.
        Assert.Equal(1, flights.Leave(b));
        Assert.Equal(2, flights.Count);
        Assert.Same(a, flights.Join([1, 2, 3], SameHash, asynchronous: true, owned: null, out _));
        Assert.Same(c, flights.Join([1, 2, 3, 4], SameHash, asynchronous: true, owned: null, out _));
        _ = flights.Join([9], SameHash, asynchronous: true, owned: null, out bool bRestarted);
        Assert.True(bRestarted);

        Assert.Equal(2, flights.Leave(a));
        Assert.Equal(1, flights.Leave(c));
        Assert.Equal(1, flights.Count);
    }

    [Fact]
    public void A_waiter_whose_value_expired_before_it_read_gets_the_flights_value_without_a_second_factory_call()
    {
        // Each look at the clock is an hour after the last: whatever the first caller stores has expired when the waiter reads.
        var clock = new LeapingClock();
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = 8 << 20, TimeProvider = clock, ExpirationScanInterval = Timeout.InfiniteTimeSpan });
        byte[] key = CacheTestData.Key(5);
        var options = new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(30) };
        int calls = 0;
        byte[]? waited = null;
        Exception? waiterFailure = null;
        var waiter = new Thread(() =>
        {
            try
            {
                using NativeCacheLease lease = cache.GetOrAdd(key, 0, (_, _, writer) =>
                {
                    _ = Interlocked.Increment(ref calls);
                    writer.Write(CacheTestData.Value(5, 2, 64));
                }, options);
                waited = lease.Span.ToArray();
            }
            catch (Exception e)
            {
                waiterFailure = e;
            }
        });

        using (NativeCacheLease first = cache.GetOrAdd(key, 0, (_, _, writer) =>
        {
            _ = Interlocked.Increment(ref calls);
            waiter.Start();
            // The waiter has joined this flight before the value is produced.
            Assert.True(SpinWait.SpinUntil(() => WaitersOf(cache, key) == 1, TimeSpan.FromMinutes(2)));
            writer.Write(CacheTestData.Value(5, 1, 64));
        }, options))
        {
            Assert.True(CacheTestData.IsIntact(first.Span, 5, out long firstVersion));
            Assert.Equal(1, firstVersion);
        }

        waiter.Join();
        Assert.Null(waiterFailure);
        Assert.Equal(1, calls);
        Assert.NotNull(waited);
        Assert.True(CacheTestData.IsIntact(waited, 5, out long version));
        Assert.Equal(1, version);
        Assert.Equal(0, cache.Flights.Count);
    }

    [Fact]
    public void A_flight_that_ends_between_a_miss_and_the_join_is_not_followed_by_a_second_factory_call()
    {
        using var cache = new NativeCache(8 << 20);
        byte[] key = CacheTestData.Key(7);
        int calls = 0;
        NativeCacheValueFactory<int> factory = (asked, version, writer) =>
        {
            _ = Interlocked.Increment(ref calls);
            writer.Write(CacheTestData.Value(7, version, 64));
        };
        // The first miss lets another call's whole flight run (and end, its value stored) before it joins one.
        int windows = 0;
        cache.BetweenMissAndFlight = () =>
        {
            if (Interlocked.Increment(ref windows) == 1)
            {
                using NativeCacheLease other = cache.GetOrAdd(key, 1, factory);
            }
        };

        using (NativeCacheLease lease = cache.GetOrAdd(key, 2, factory))
        {
            Assert.True(CacheTestData.IsIntact(lease.Span, 7, out long version));
            Assert.Equal(1, version);
        }

        Assert.Equal(2, windows);
        Assert.Equal(1, calls);
        Assert.Equal(1, cache.GetStatistics().Writes);
        Assert.Equal(0, cache.Flights.Count);
    }

    [Fact]
    public async Task An_async_flight_that_ends_between_a_miss_and_the_join_is_not_followed_by_a_second_factory_call()
    {
        using var cache = new NativeCache(8 << 20);
        byte[] key = CacheTestData.Key(8);
        int calls = 0;
        Func<int, IBufferWriter<byte>, CancellationToken, ValueTask> factory = (version, writer, token) =>
        {
            _ = Interlocked.Increment(ref calls);
            writer.Write(CacheTestData.Value(8, version, 64));
            return ValueTask.CompletedTask;
        };
        NativeCacheValueReader<int, long> versionOf = (span, _) => CacheTestData.IsIntact(span, 8, out long version) ? version : -1;
        // The first miss lets another call's whole flight run (a synchronous one, so the hook can wait for it).
        int windows = 0;
        cache.BetweenMissAndFlight = () =>
        {
            if (Interlocked.Increment(ref windows) == 1)
            {
                using NativeCacheLease other = cache.GetOrAdd(key, 1, (asked, version, writer) =>
                {
                    _ = Interlocked.Increment(ref calls);
                    writer.Write(CacheTestData.Value(8, version, 64));
                });
            }
        };

        Assert.Equal(1, await cache.GetOrAddAsync(key, 2, factory, versionOf));
        Assert.Equal(2, windows);
        Assert.Equal(1, calls);
        Assert.Equal(1, cache.GetStatistics().Writes);
        Assert.Equal(0, cache.Flights.Count);
    }

    [Fact]
    public async Task A_reader_that_throws_on_the_value_found_after_the_miss_leaves_no_flight_behind()
    {
        using var cache = new NativeCache(8 << 20);
        byte[] key = CacheTestData.Key(9);
        cache.BetweenMissAndFlight = () => cache.Set(key, CacheTestData.Value(9, 1, 64));
        var failure = new FormatException("reader");
        ValueTask<int> call = cache.GetOrAddAsync<int, int>(key, 0, (_, _, _) => throw new InvalidOperationException("no factory call expected"), (_, _) => throw failure);
        Assert.Same(failure, await Assert.ThrowsAsync<FormatException>(call.AsTask));
        Assert.Equal(0, cache.Flights.Count);
        cache.BetweenMissAndFlight = null;
        Assert.Equal(64, await cache.GetOrAddAsync<int, int>(key, 0, (_, _, _) => throw new InvalidOperationException("no factory call expected"), (span, _) => span.Length));
    }

    [Fact]
    public void Many_threads_asking_for_the_same_keys_run_each_keys_factory_exactly_once()
    {
        // The race this guards (a flight ending between a caller's miss and its join) showed in about half
        // of such rounds before the caller that starts a flight read again; twenty rounds make a miss unlikely.
        const int Keys = 2000;
        for (int round = 0; round < 20; round++)
        {
            using var cache = new NativeCache(16 << 20);
            int[] calls = new int[Keys];
            int wrongValues = 0;
            using var go = new ManualResetEventSlim();
            Workers.Running askers = Workers.Start(8, _ =>
            {
                go.Wait();
                for (int k = 0; k < Keys; k++)
                {
                    using NativeCacheLease lease = cache.GetOrAdd(BitConverter.GetBytes(k), k, (asked, key, writer) =>
                    {
                        _ = Interlocked.Increment(ref calls[key]);
                        Thread.SpinWait(200);
                        writer.Write(BitConverter.GetBytes(key));
                    });
                    if (BitConverter.ToInt32(lease.Span) != k)
                    {
                        _ = Interlocked.Increment(ref wrongValues);
                    }
                }
            });
            go.Set();
            askers.Join();

            int[] repeated = [.. Enumerable.Range(0, Keys).Where(k => calls[k] != 1)];
            Assert.True(repeated.Length == 0, $"round {round}: keys whose factory ran other than once: {string.Join(", ", repeated.Select(k => $"{k} ({calls[k]} calls)"))}");
            Assert.Equal(0, wrongValues);
            NativeCacheStatistics statistics = cache.GetStatistics();
            Assert.Equal(Keys, statistics.Writes);
            Assert.Equal(Keys, statistics.Entries);
            Assert.Equal(0, statistics.EvictedForCapacity);
            Assert.Equal(0, cache.Flights.Count);
        }
    }

    private static int WaitersOf(NativeCache cache, byte[] key) => cache.Flights.WaitersFor(key, System.IO.Hashing.XxHash3.HashToUInt64(key));

    private sealed class LeapingClock : TimeProvider
    {
        private long _ticks = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).UtcTicks;

        public override DateTimeOffset GetUtcNow() => new(Interlocked.Add(ref _ticks, TimeSpan.TicksPerHour), TimeSpan.Zero);
    }
}
