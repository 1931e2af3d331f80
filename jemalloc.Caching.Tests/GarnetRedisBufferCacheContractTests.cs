using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.StackExchangeRedis;

namespace jemalloc.Caching.Tests;

/// <summary>The buffer contract against RedisCache (an IBufferDistributedCache since .NET 9) on Garnet.</summary>
public sealed class GarnetRedisBufferCacheContractTests : BufferDistributedCacheContract, IClassFixture<GarnetServerFixture>
{
    private readonly RedisCache _cache;

    public GarnetRedisBufferCacheContractTests(GarnetServerFixture garnet)
    {
        _cache = new RedisCache(new RedisCacheOptions { Configuration = garnet.Configuration, InstanceName = $"{Guid.NewGuid():N}:" });
    }

    protected override IBufferDistributedCache Cache => (IBufferDistributedCache)_cache;

    public override void Dispose() => _cache.Dispose();
}
