namespace jemalloc.Caching.Tests;

/// <summary>The contract against our adapter over a NativeCache of its own.</summary>
public sealed class NativeDistributedCacheContractTests : DistributedCacheContract
{
    private readonly NativeDistributedCache _cache = new(new NativeDistributedCacheOptions { BudgetBytes = 128L << 20 });

    protected override Microsoft.Extensions.Caching.Distributed.IDistributedCache Cache => _cache;

    public override void Dispose() => _cache.Dispose();
}
