using System.Buffers;
using System.Diagnostics;
using jemalloc.Caching.Internal;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;

namespace jemalloc.Caching;

/// <summary>
/// A <see cref="NativeCache"/> as an <see cref="IDistributedCache"/> and <see cref="IBufferDistributedCache"/>:
/// what code written for Redis or <c>MemoryDistributedCache</c> (HybridCache's second level, session
/// state, output caching) stores in native memory within a byte budget, where the garbage collector
/// never sees it. Any number of threads may call it at once.
/// </summary>
/// <remarks>
/// <para>
/// A key is its string's UTF-8 bytes (so the same entry as <see cref="NativeCache.Set(string, ReadOnlySpan{byte}, NativeCacheEntryOptions)"/>
/// with that string); <see cref="DistributedCacheEntryOptions"/> map to <see cref="NativeCacheEntryOptions"/> as
/// Redis reads them: an absolute expiry, or one relative to now (which wins over the absolute one when
/// both are set), and a sliding expiry, which a read or <see cref="Refresh"/> restarts, capped by the absolute one.
/// </para>
/// <para>
/// The calls complete synchronously, the asynchronous ones too: an argument or usage error is thrown
/// by the call itself, and a canceled token gives a canceled task without touching the cache.
/// </para>
/// </remarks>
public sealed class NativeDistributedCache : IBufferDistributedCache, IDisposable
{
    private static readonly TimeSpan DisposeWait = TimeSpan.FromSeconds(1);
    private readonly bool _ownsCache;
    private volatile bool _disposed;

    /// <summary>Creates a cache with its own <see cref="NativeCache"/>, made from <paramref name="optionsAccessor"/>, which <see cref="Dispose"/> frees.</summary>
    /// <param name="optionsAccessor">The settings (a <see cref="NativeDistributedCacheOptions"/> is one).</param>
    /// <exception cref="ArgumentNullException"><paramref name="optionsAccessor"/> or its value is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The budget is below <see cref="NativeCache.MinimumBudgetBytes"/>, or another setting is out of range.</exception>
    public NativeDistributedCache(IOptions<NativeDistributedCacheOptions> optionsAccessor)
        : this(optionsAccessor, fallbackTimeProvider: null)
    {
    }

    /// <summary>Wraps an existing <paramref name="cache"/>, which stays the caller's: <see cref="Dispose"/> leaves it as it is.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="cache"/> is null.</exception>
    public NativeDistributedCache(NativeCache cache)
    {
        ArgumentNullException.ThrowIfNull(cache);
        Cache = cache;
    }

    /// <summary>The constructor of the service registration: a clock from the container when the options name none.</summary>
    internal NativeDistributedCache(IOptions<NativeDistributedCacheOptions> optionsAccessor, TimeProvider? fallbackTimeProvider)
    {
        ArgumentNullException.ThrowIfNull(optionsAccessor);
        NativeDistributedCacheOptions options = optionsAccessor.Value;
        ArgumentNullException.ThrowIfNull(options, nameof(optionsAccessor) + ".Value");
        if (options.BudgetBytes < NativeCache.MinimumBudgetBytes)
        {
            CachingThrow.BudgetTooSmall(nameof(optionsAccessor), options.BudgetBytes);
        }

        Cache = new NativeCache(new NativeCacheOptions
        {
            BudgetBytes = options.BudgetBytes,
            ShardCount = options.ShardCount,
            ExpirationScanInterval = options.ExpirationScanInterval,
            HugePages = options.HugePages,
            TimeProvider = options.TimeProvider ?? fallbackTimeProvider ?? TimeProvider.System,
        });
        _ownsCache = true;
    }

    /// <summary>The cache the entries are in: for its statistics, or to read and write the same entries without a copy.</summary>
    public NativeCache Cache { get; }

    /// <summary>A copy of a key's value, or null if the key is not in the cache; a read, so it restarts a sliding expiry.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is longer than <see cref="NativeCache.MaxKeyLength"/> bytes in UTF-8.</exception>
    /// <exception cref="ObjectDisposedException">This cache (or the <see cref="NativeCache"/> it wraps) was disposed.</exception>
    public byte[]? Get(string key)
    {
        ThrowIfDisposed();
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        return Cache.GetBytes(utf8.Bytes);
    }

    /// <summary>As <see cref="Get"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public Task<byte[]?> GetAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        return token.IsCancellationRequested ? Task.FromCanceled<byte[]?>(token) : Task.FromResult(Get(key));
    }

    /// <summary>Writes a key's value to <paramref name="destination"/> without an intermediate copy; a read, so it restarts a sliding expiry.</summary>
    /// <returns>Whether the key was found; nothing is written if not.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> or <paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool TryGet(string key, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        ThrowIfDisposed();
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        return Cache.TryWriteTo(utf8.Bytes, destination);
    }

    /// <summary>As <see cref="TryGet"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled (nothing is written).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> or <paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public ValueTask<bool> TryGetAsync(string key, IBufferWriter<byte> destination, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(destination);
        return token.IsCancellationRequested ? ValueTask.FromCanceled<bool>(token) : new ValueTask<bool>(TryGet(key, destination));
    }

    /// <summary>Writes a key's value, replacing any value it had; evicts other entries if the budget needs it.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/>, <paramref name="value"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long, or the entry is bigger than the cache's budget.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/> is not in the future.</exception>
    /// <exception cref="InvalidOperationException">Open leases on the <see cref="NativeCache"/> hold so much of its budget that the entry cannot fit.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public void Set(string key, byte[] value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(value);
        Set(key, new ReadOnlySpan<byte>(value), options);
    }

    /// <summary>As <see cref="Set(string, byte[], DistributedCacheEntryOptions)"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled (nothing is written).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/>, <paramref name="value"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long, or the entry is bigger than the budget.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/> is not in the future.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(value);
        ArgumentNullException.ThrowIfNull(options);
        if (token.IsCancellationRequested)
        {
            return Task.FromCanceled(token);
        }

        Set(key, value, options);
        return Task.CompletedTask;
    }

    /// <summary>Writes a key's value from a sequence of segments (no copy into one array first), replacing any value it had.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long, or the entry is bigger than the cache's budget.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/> is not in the future.</exception>
    /// <exception cref="InvalidOperationException">Open leases on the <see cref="NativeCache"/> hold so much of its budget that the entry cannot fit.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public void Set(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        ThrowIfDisposed();
        if (value.IsSingleSegment)
        {
            Set(key, value.FirstSpan, options);
            return;
        }

        CheckLength(value.Length);
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        Cache.Set(utf8.Bytes, value, ToEntryOptions(options));
    }

    /// <summary>As <see cref="Set(string, ReadOnlySequence{byte}, DistributedCacheEntryOptions)"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled (nothing is written).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long, or the entry is bigger than the budget.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/> is not in the future.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public ValueTask SetAsync(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        if (token.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(token);
        }

        Set(key, value, options);
        return ValueTask.CompletedTask;
    }

    /// <summary>Restarts a key's sliding expiry as a read would, without reading the value; nothing happens if the key is not in the cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public void Refresh(string key)
    {
        ThrowIfDisposed();
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        Cache.Refresh(utf8.Bytes);
    }

    /// <summary>As <see cref="Refresh"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public Task RefreshAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (token.IsCancellationRequested)
        {
            return Task.FromCanceled(token);
        }

        Refresh(key);
        return Task.CompletedTask;
    }

    /// <summary>Removes a key; nothing happens if it is not in the cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public void Remove(string key)
    {
        ThrowIfDisposed();
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        Cache.Remove(utf8.Bytes);
    }

    /// <summary>As <see cref="Remove"/>; completes synchronously.</summary>
    /// <returns>A canceled task if <paramref name="token"/> is canceled (nothing is removed).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="key"/> has a lone surrogate or is too long.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public Task RemoveAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (token.IsCancellationRequested)
        {
            return Task.FromCanceled(token);
        }

        Remove(key);
        return Task.CompletedTask;
    }

    /// <summary>
    /// Ends this cache: its calls throw <see cref="ObjectDisposedException"/> afterwards. The
    /// <see cref="NativeCache"/> it created is freed, once the calls already under way on other threads
    /// have let go of their values (it waits up to a second for them); one passed to its constructor is
    /// left to its owner. Safe to call again.
    /// </summary>
    /// <exception cref="InvalidOperationException">
    /// Leases on the cache it created are still open after that second (leases taken through
    /// <see cref="Cache"/> and not ended): nothing is freed, and this cache stays usable.
    /// </exception>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        // From here on new calls are refused; a call that passed its check just before may still hold a
        // lease on its value while it copies it, which makes the NativeCache refuse to go.
        _disposed = true;
        if (!_ownsCache)
        {
            return;
        }

        var waited = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                Cache.Dispose();
                return;
            }
            catch (InvalidOperationException) when (waited.Elapsed < DisposeWait)
            {
                Thread.Sleep(1);
            }
            catch (InvalidOperationException)
            {
                // Leases the application holds: it may end them and dispose again.
                _disposed = false;
                throw;
            }
        }
    }

    private void Set(string key, ReadOnlySpan<byte> value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        ThrowIfDisposed();
        CheckLength(value.Length);
        using Utf8Key utf8 = new(key, stackalloc byte[Utf8Key.StackBytes]);
        Cache.Set(utf8.Bytes, value, ToEntryOptions(options));
    }

    // A value over the whole budget can never fit: refused before the key is even encoded (a sequence's
    // length may be past int.MaxValue, which a NativeCache entry could not hold either).
    private void CheckLength(long length)
    {
        if (length > Cache.BudgetBytes)
        {
            CachingThrow.ValueOverBudget("value", length, Cache.BudgetBytes);
        }
    }

    // As RedisCache and MemoryCache read the options: the relative expiry, when set, replaces the
    // absolute one. A past absolute expiry is refused by the NativeCache (ArgumentOutOfRangeException).
    private static NativeCacheEntryOptions ToEntryOptions(DistributedCacheEntryOptions options) => new()
    {
        AbsoluteExpiration = options.AbsoluteExpirationRelativeToNow is null ? options.AbsoluteExpiration : null,
        AbsoluteExpirationRelativeToNow = options.AbsoluteExpirationRelativeToNow,
        SlidingExpiration = options.SlidingExpiration,
    };

    private void ThrowIfDisposed()
    {
        if (_disposed)
        {
            CachingThrow.Disposed();
        }
    }
}
