using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.Caching.StackExchangeRedis;
using Microsoft.Extensions.DependencyInjection;

namespace jemalloc.Caching.Tests;

/// <summary>
/// The docs' caching examples (regions <c>cache-native-l2</c>, <c>cache-redis-l2</c> and
/// <c>cache-hybrid</c>), run as printed: the same registration with our cache or RedisCache, and
/// HybridCache over ours.
/// </summary>
public sealed class DocExampleTests
{
    private sealed record Product(int Id, string Name);

    private static ValueTask<Product> LoadProductAsync(int id, CancellationToken token) =>
        ValueTask.FromResult(new Product(id, $"product {id}"));

    [Fact]
    public void The_readme_registrations_give_HybridCache_our_cache_or_RedisCache_as_its_second_level()
    {
        var services = new ServiceCollection();
        #region example: cache-native-l2
        services.AddNativeDistributedCache(options => options.BudgetBytes = 512L << 20);  // 512 MiB the GC never sees
        services.AddHybridCache();
        #endregion
        using (ServiceProvider provider = services.BuildServiceProvider())
        {
            Assert.IsType<NativeDistributedCache>(provider.GetRequiredService<IDistributedCache>());
            Assert.NotNull(provider.GetRequiredService<HybridCache>());
        }

        services = new ServiceCollection();
        #region example: cache-redis-l2
        services.AddStackExchangeRedisCache(options => options.Configuration = "cache.internal:6379");
        services.AddHybridCache();
        #endregion
        // Resolving connects nothing: RedisCache connects at its first call.
        using (ServiceProvider provider = services.BuildServiceProvider())
        {
            Assert.IsType<RedisCache>(provider.GetRequiredService<IDistributedCache>(), exactMatch: false);
            Assert.NotNull(provider.GetRequiredService<HybridCache>());
        }
    }

    [Fact]
    public async Task The_HybridCache_example_reads_through_the_native_cache_and_drops_by_tag()
    {
        var services = new ServiceCollection();
        services.AddNativeDistributedCache(options => options.BudgetBytes = 64L << 20);
        services.AddHybridCache();
        await using ServiceProvider provider = services.BuildServiceProvider();
        var cache = provider.GetRequiredService<HybridCache>();
        NativeCache native = provider.GetRequiredService<NativeDistributedCache>().Cache;
        int id = 42;

        #region example: cache-hybrid
        Product product = await cache.GetOrCreateAsync(
            $"product:{id}",
            token => LoadProductAsync(id, token),        // runs once per key, however many callers wait
            new HybridCacheEntryOptions { Expiration = TimeSpan.FromMinutes(10) },
            tags: ["products"]);

        await cache.RemoveByTagAsync("products");        // every server drops them: the mark is in the L2
        #endregion

        Assert.Equal(new Product(42, "product 42"), product);
        Assert.True(native.ContainsKey("__MSFT_HCT__products"u8));
        Product again = await cache.GetOrCreateAsync($"product:{id}", _ => ValueTask.FromResult(new Product(42, "reloaded")), tags: ["products"]);
        Assert.Equal("reloaded", again.Name);
    }
}
