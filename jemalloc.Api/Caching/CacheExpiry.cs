namespace jemalloc.Caching;

/// <summary>
/// A write's expiry in the cache's clock (milliseconds of <see cref="NativeCacheOptions.TimeProvider"/>):
/// its first deadline, its sliding window (0 if it does not slide) and its absolute deadline
/// (<see cref="long.MaxValue"/> if none).
/// </summary>
internal readonly record struct CacheExpiry(long DeadlineMs, long SlidingMs, long AbsoluteMs)
{
    /// <summary>No expiry.</summary>
    internal static CacheExpiry None => new(long.MaxValue, 0, long.MaxValue);

    /// <summary>Whether the entry expires at all.</summary>
    internal bool Expires => DeadlineMs != long.MaxValue;

    /// <summary>The bytes of expiry fields the entry carries.</summary>
    internal int Bytes => CacheEntry.ExpiryBytesFor(Expires, SlidingMs > 0, AbsoluteMs != long.MaxValue);

    /// <summary>
    /// The expiry of <paramref name="options"/> written at <paramref name="nowMs"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">A relative or sliding expiry is not positive, or the absolute one is not in the future.</exception>
    internal static CacheExpiry From(in NativeCacheEntryOptions options, long nowMs, DateTimeOffset now)
    {
        long absolute = long.MaxValue;
        if (options.AbsoluteExpiration is { } at)
        {
            if (at <= now)
            {
                throw new ArgumentOutOfRangeException(nameof(options), at, $"The absolute expiration {at:O} is not in the future (now is {now:O}).");
            }

            absolute = at.ToUnixTimeMilliseconds();
        }

        if (options.AbsoluteExpirationRelativeToNow is { } relative)
        {
            if (relative <= TimeSpan.Zero)
            {
                throw new ArgumentOutOfRangeException(nameof(options), relative, "The relative expiration must be positive.");
            }

            absolute = Math.Min(absolute, CacheEntry.SaturatingAdd(nowMs, Milliseconds(relative)));
        }

        long sliding = 0;
        if (options.SlidingExpiration is { } window)
        {
            if (window <= TimeSpan.Zero)
            {
                throw new ArgumentOutOfRangeException(nameof(options), window, "The sliding expiration must be positive.");
            }

            sliding = Milliseconds(window);
        }

        long deadline = sliding > 0 ? Math.Min(absolute, CacheEntry.SaturatingAdd(nowMs, sliding)) : absolute;
        // An expiry so far ahead that it saturates is still an expiry: one millisecond short of "never".
        return new CacheExpiry(
            absolute == long.MaxValue && sliding == 0 ? long.MaxValue : Math.Min(deadline, long.MaxValue - 1),
            sliding,
            absolute);
    }

    // At least one millisecond: a positive span shorter than that still expires.
    private static long Milliseconds(TimeSpan span) => Math.Max(1, (long)Math.Ceiling(span.TotalMilliseconds));
}
