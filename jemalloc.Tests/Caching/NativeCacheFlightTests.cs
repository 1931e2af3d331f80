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

    private static int WaitersOf(NativeCache cache, byte[] key) => cache.Flights.WaitersFor(key, System.IO.Hashing.XxHash3.HashToUInt64(key));

    private sealed class LeapingClock : TimeProvider
    {
        private long _ticks = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).UtcTicks;

        public override DateTimeOffset GetUtcNow() => new(Interlocked.Add(ref _ticks, TimeSpan.TicksPerHour), TimeSpan.Zero);
    }
}
