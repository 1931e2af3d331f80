using Microsoft.Extensions.Options;

namespace jemalloc.Caching;

/// <summary>
/// The settings of a <see cref="NativeDistributedCache"/> that creates its own <see cref="NativeCache"/>
/// (<see cref="Microsoft.Extensions.DependencyInjection.NativeDistributedCacheServiceCollectionExtensions.AddNativeDistributedCache(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{NativeDistributedCacheOptions})"/>).
/// They are read once, when the cache is created.
/// </summary>
public sealed class NativeDistributedCacheOptions : IOptions<NativeDistributedCacheOptions>
{
    /// <summary>The budget when none is set: 256 MiB.</summary>
    public const long DefaultBudgetBytes = 256L << 20;

    /// <summary>
    /// The most bytes the cache holds from the allocator (entries, their headers and its index, as
    /// <see cref="NativeCacheOptions.BudgetBytes"/>); a write evicts what it must to stay within it.
    /// At least <see cref="NativeCache.MinimumBudgetBytes"/>; <see cref="DefaultBudgetBytes"/> by default.
    /// </summary>
    public long BudgetBytes { get; set; } = DefaultBudgetBytes;

    /// <summary>How many independently locked shards the keys are spread over (<see cref="NativeCacheOptions.ShardCount"/>); 0 to let the cache choose.</summary>
    public int ShardCount { get; set; }

    /// <summary>How often the memory of expired entries is given back when nothing else touches the cache (<see cref="NativeCacheOptions.ExpirationScanInterval"/>).</summary>
    public TimeSpan ExpirationScanInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Whether the cache's memory asks for transparent huge pages where the host has them (<see cref="NativeCacheOptions.HugePages"/>; false by default).</summary>
    public bool HugePages { get; set; }

    /// <summary>
    /// The clock that expiry is measured against. When null, the <see cref="System.TimeProvider"/> registered
    /// in the container is used (the one HybridCache uses too), else <see cref="TimeProvider.System"/>.
    /// </summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>This instance, so the options can be passed where an <see cref="IOptions{TOptions}"/> is asked for.</summary>
    NativeDistributedCacheOptions IOptions<NativeDistributedCacheOptions>.Value => this;
}
