using System.Buffers;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;

namespace jemalloc.Caching.Tests;

/// <summary>The container owns the cache it registered: its disposal gives back every native allocation. Alone, so the ledger's counts are this test's.</summary>
public sealed class ServiceDisposalTests : LedgerBalanced
{
    [Fact]
    public void Disposing_the_container_frees_the_cache_and_every_allocation_it_made()
    {
        ServiceProvider provider = new ServiceCollection()
            .AddNativeDistributedCache(o => o.BudgetBytes = 16L << 20)
            .BuildServiceProvider();
        var cache = provider.GetRequiredService<IDistributedCache>();
        for (int i = 0; i < 2000; i++)
        {
            cache.Set($"k{i}", new byte[10 + (i % 3000)], new DistributedCacheEntryOptions());
        }

        Assert.True(AllocationLedger.LiveCount > 0);
        provider.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k1"));
    }

    [Fact]
    public void An_adapter_over_a_cache_it_does_not_own_frees_nothing_and_the_owner_frees_everything()
    {
        var shared = new NativeCache(16L << 20);
        using (ServiceProvider provider = new ServiceCollection()
            .AddSingleton<IDistributedCache>(new NativeDistributedCache(shared))
            .BuildServiceProvider())
        {
            provider.GetRequiredService<IDistributedCache>().Set("k", new byte[1000], new DistributedCacheEntryOptions());
        }

        Assert.Equal(1000, shared.GetBytes("k"u8)!.Length);
        shared.Dispose();
    }

    [Fact]
    public void Disposing_while_other_threads_read_and_write_waits_for_their_values_and_frees_everything()
    {
        var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 16L << 20 });
        for (int i = 0; i < 64; i++)
        {
            cache.Set($"k{i}", new byte[4096], new DistributedCacheEntryOptions());
        }

        var unexpected = new System.Collections.Concurrent.ConcurrentBag<Exception>();
        int calls = 0, stopped = 0;
        Thread[] threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            // A slow destination keeps the value leased while the main thread disposes.
            var slow = new SlowWriter();
            try
            {
                for (int i = 0; ; i++)
                {
                    string key = $"k{i % 64}";
                    switch ((i + t) % 4)
                    {
                        case 0: cache.TryGet(key, slow); break;
                        case 1: cache.Get(key); break;
                        case 2: cache.Set(key, new byte[4096], new DistributedCacheEntryOptions()); break;
                        default: cache.Refresh(key); break;
                    }

                    Interlocked.Increment(ref calls);
                }
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref stopped);
            }
            catch (Exception e)
            {
                unexpected.Add(e);
            }
        })).ToArray();
        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        SpinWait.SpinUntil(() => Volatile.Read(ref calls) > 200);
        cache.Dispose();
        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.Empty(unexpected);
        Assert.Equal(4, stopped);
    }

    [Fact]
    public void Dispose_waits_for_a_read_that_holds_its_value_while_dispose_begins()
    {
        var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 16L << 20 });
        cache.Set("k", new byte[100], new DistributedCacheEntryOptions());
        using var inside = new ManualResetEventSlim();
        // The destination holds the read (and its lease) until the cache says it is disposed, and a while longer.
        var holding = new HoldingWriter(inside, () => cache.Refresh("other"));
        bool read = false;
        Exception? failed = null;
        var reader = new Thread(() =>
        {
            try
            {
                read = cache.TryGet("k", holding);
            }
            catch (Exception e)
            {
                failed = e;
            }
        });
        reader.Start();
        inside.Wait();
        cache.Dispose();
        reader.Join();
        Assert.Null(failed);
        Assert.True(read);
        Assert.True(holding.SawDispose);
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k"));
    }

    [Fact]
    public void A_lease_the_application_keeps_makes_dispose_refuse_and_the_cache_stays_usable_until_it_ends()
    {
        var cache = new NativeDistributedCache(new NativeDistributedCacheOptions { BudgetBytes = 16L << 20 });
        cache.Set("k", [1, 2, 3], new DistributedCacheEntryOptions());
        Assert.True(cache.Cache.TryGet("k"u8, out NativeCacheLease lease));
        InvalidOperationException? refused = null;
        try
        {
            cache.Dispose();
        }
        catch (InvalidOperationException e)
        {
            refused = e;
        }

        Assert.NotNull(refused);
        Assert.Contains("lease", refused.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Equal([1, 2, 3], cache.Get("k"));
        Assert.Equal(3, lease.Length);
        lease.Dispose();
        cache.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k"));
    }

    private sealed class HoldingWriter(ManualResetEventSlim inside, Action probe) : IBufferWriter<byte>
    {
        private readonly byte[] _buffer = new byte[8192];

        internal bool SawDispose { get; private set; }

        public void Advance(int count)
        {
        }

        public Memory<byte> GetMemory(int sizeHint = 0) => _buffer;

        public Span<byte> GetSpan(int sizeHint = 0)
        {
            inside.Set();
            try
            {
                while (true)
                {
                    probe();
                    Thread.Sleep(1);
                }
            }
            catch (ObjectDisposedException)
            {
                SawDispose = true;
            }

            Thread.Sleep(200);
            return _buffer;
        }
    }

    private sealed class SlowWriter : IBufferWriter<byte>
    {
        private readonly byte[] _buffer = new byte[8192];

        public void Advance(int count)
        {
        }

        public Memory<byte> GetMemory(int sizeHint = 0) => _buffer;

        public Span<byte> GetSpan(int sizeHint = 0)
        {
            Thread.Sleep(1);
            return _buffer;
        }
    }
}
