using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Memory;
using Microsoft.Extensions.Options;

namespace jemalloc.Caching.Tests;

/// <summary>The contract against Microsoft's MemoryDistributedCache, the in-process cache users know.</summary>
public sealed class MemoryDistributedCacheContractTests : DistributedCacheContract
{
    private readonly MemoryDistributedCache _cache = new(Options.Create(new MemoryDistributedCacheOptions()));

    protected override IDistributedCache Cache => _cache;

    // MemoryCache drops an entry written with a past absolute expiry, and the adapter ignores the token.
    protected override bool RejectsPastAbsoluteExpiration => false;

    protected override bool HonoursCancellation => false;

    protected override bool SharesArrays => true;

    public override void Dispose()
    {
    }
}
