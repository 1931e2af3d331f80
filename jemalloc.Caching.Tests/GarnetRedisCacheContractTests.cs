using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.StackExchangeRedis;

namespace jemalloc.Caching.Tests;

/// <summary>
/// The contract against RedisCache (Microsoft.Extensions.Caching.StackExchangeRedis) on a real Garnet
/// server in this process: each test its own key space (the cache's instance name).
/// </summary>
public sealed class GarnetRedisCacheContractTests : DistributedCacheContract, IClassFixture<GarnetServerFixture>
{
    private readonly RedisCache _cache;

    public GarnetRedisCacheContractTests(GarnetServerFixture garnet)
    {
        _cache = new RedisCache(new RedisCacheOptions { Configuration = garnet.Configuration, InstanceName = $"{Guid.NewGuid():N}:" });
    }

    protected override IDistributedCache Cache => _cache;

    public override void Dispose() => _cache.Dispose();
}
