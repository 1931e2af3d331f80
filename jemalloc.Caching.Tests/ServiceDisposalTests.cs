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
}
