using Microsoft.Extensions.Caching.Distributed;

namespace jemalloc.Caching.Tests;

/// <summary>The buffer contract against our adapter.</summary>
public sealed class NativeBufferDistributedCacheContractTests : BufferDistributedCacheContract
{
    private readonly NativeDistributedCache _cache = new(new NativeDistributedCacheOptions { BudgetBytes = 64L << 20 });

    protected override IBufferDistributedCache Cache => _cache;

    public override void Dispose() => _cache.Dispose();
}
