using jemalloc;
using jemalloc.Caching;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

// In the container's namespace, as AddDistributedMemoryCache and AddStackExchangeRedisCache are, so the
// registration is found where an application's other registrations are.
namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers a <see cref="NativeDistributedCache"/> as the application's distributed cache.</summary>
public static class NativeDistributedCacheServiceCollectionExtensions
{
    /// <summary>
    /// Registers a <see cref="NativeDistributedCache"/> with the default settings (a budget of
    /// <see cref="NativeDistributedCacheOptions.DefaultBudgetBytes"/>) as <see cref="IDistributedCache"/> and
    /// <see cref="IBufferDistributedCache"/>; see <see cref="AddNativeDistributedCache(IServiceCollection, Action{NativeDistributedCacheOptions})"/>.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    public static IServiceCollection AddNativeDistributedCache(this IServiceCollection services) =>
        AddNativeDistributedCache(services, static _ => { });

    /// <summary>
    /// Registers a <see cref="NativeDistributedCache"/> as <see cref="IDistributedCache"/> and
    /// <see cref="IBufferDistributedCache"/> (one instance, a singleton, also resolvable as itself), replacing
    /// a distributed cache registered before, as <c>AddStackExchangeRedisCache</c> does. It creates its
    /// <see cref="NativeCache"/> when first resolved, and the container's disposal frees it. Its clock is
    /// <see cref="NativeDistributedCacheOptions.TimeProvider"/>, else the container's <see cref="TimeProvider"/>, else the system's.
    /// </summary>
    /// <param name="services">The application's services.</param>
    /// <param name="setupAction">Sets the cache's options (its budget above all).</param>
    /// <returns><paramref name="services"/>, to chain further registrations.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="setupAction"/> is null.</exception>
    public static IServiceCollection AddNativeDistributedCache(this IServiceCollection services, Action<NativeDistributedCacheOptions> setupAction)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(setupAction);
        services.AddOptions();
        services.Configure(setupAction);
        services.TryAddSingleton(static provider => new NativeDistributedCache(
            provider.GetRequiredService<IOptions<NativeDistributedCacheOptions>>(), provider.GetService<TimeProvider>()));
        // Both interfaces resolve to that one instance: HybridCache asks for IDistributedCache and takes
        // the buffer path when what it gets is an IBufferDistributedCache.
        services.Add(ServiceDescriptor.Singleton<IDistributedCache>(static provider => provider.GetRequiredService<NativeDistributedCache>()));
        services.Add(ServiceDescriptor.Singleton<IBufferDistributedCache>(static provider => provider.GetRequiredService<NativeDistributedCache>()));
        return services;
    }
}
