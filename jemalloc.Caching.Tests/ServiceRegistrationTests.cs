using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Caching.Tests;

/// <summary>AddNativeDistributedCache: what it registers, whose clock it takes, and that the container's disposal frees the cache.</summary>
public sealed class ServiceRegistrationTests
{
    [Fact]
    public void One_instance_is_the_distributed_cache_the_buffer_cache_and_itself_with_the_options_set()
    {
        using ServiceProvider provider = new ServiceCollection()
            .AddNativeDistributedCache(o => o.BudgetBytes = 24L << 20)
            .BuildServiceProvider();
        var cache = provider.GetRequiredService<NativeDistributedCache>();
        Assert.Same(cache, provider.GetRequiredService<IDistributedCache>());
        Assert.Same(cache, provider.GetRequiredService<IBufferDistributedCache>());
        Assert.Equal(24L << 20, cache.Cache.BudgetBytes);
    }

    [Fact]
    public void Without_settings_the_budget_is_the_default()
    {
        using ServiceProvider provider = new ServiceCollection().AddNativeDistributedCache().BuildServiceProvider();
        Assert.Equal(NativeDistributedCacheOptions.DefaultBudgetBytes, provider.GetRequiredService<NativeDistributedCache>().Cache.BudgetBytes);
    }

    [Fact]
    public void It_replaces_a_distributed_cache_registered_before_it_as_AddStackExchangeRedisCache_does()
    {
        using ServiceProvider provider = new ServiceCollection()
            .AddDistributedMemoryCache()
            .AddNativeDistributedCache(o => o.BudgetBytes = 8L << 20)
            .BuildServiceProvider();
        Assert.IsType<NativeDistributedCache>(provider.GetRequiredService<IDistributedCache>());
    }

    [Fact]
    public void The_container_clock_is_used_when_the_options_name_none()
    {
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        using ServiceProvider provider = new ServiceCollection()
            .AddSingleton<TimeProvider>(clock)
            .AddNativeDistributedCache(o => o.BudgetBytes = 8L << 20)
            .BuildServiceProvider();
        var cache = provider.GetRequiredService<IDistributedCache>();
        cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        Assert.Equal([1], cache.Get("k"));
        clock.Advance(TimeSpan.FromMinutes(2));
        Assert.Null(cache.Get("k"));
    }

    [Fact]
    public void A_clock_in_the_options_wins_over_the_container_one()
    {
        var containerClock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        var optionsClock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        using ServiceProvider provider = new ServiceCollection()
            .AddSingleton<TimeProvider>(containerClock)
            .AddNativeDistributedCache(o => (o.BudgetBytes, o.TimeProvider) = (8L << 20, optionsClock))
            .BuildServiceProvider();
        var cache = provider.GetRequiredService<IDistributedCache>();
        cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        containerClock.Advance(TimeSpan.FromMinutes(2));
        Assert.Equal([1], cache.Get("k"));
        optionsClock.Advance(TimeSpan.FromMinutes(2));
        Assert.Null(cache.Get("k"));
    }

    [Fact]
    public void A_budget_below_the_minimum_is_refused_when_the_cache_is_resolved()
    {
        using ServiceProvider provider = new ServiceCollection()
            .AddNativeDistributedCache(o => o.BudgetBytes = 1000)
            .BuildServiceProvider();
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => provider.GetRequiredService<IDistributedCache>());
        Assert.Contains("BudgetBytes", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Null_services_or_setup_are_refused_with_ArgumentNullException()
    {
        Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => ((IServiceCollection)null!).AddNativeDistributedCache()).ParamName);
        Assert.Equal("setupAction", Assert.Throws<ArgumentNullException>(() => new ServiceCollection().AddNativeDistributedCache(null!)).ParamName);
    }
}
