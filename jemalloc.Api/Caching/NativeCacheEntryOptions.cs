namespace jemalloc;

/// <summary>
/// When one entry of a <see cref="NativeCache"/> expires. <see langword="default"/> is an entry that
/// never expires (it leaves only when evicted, removed, replaced or cleared). With both an absolute and a
/// sliding expiry, the entry expires at whichever comes first.
/// </summary>
public readonly record struct NativeCacheEntryOptions
{
    /// <summary>The moment the entry expires; must be in the future when the entry is written.</summary>
    public DateTimeOffset? AbsoluteExpiration { get; init; }

    /// <summary>How long after it is written the entry expires; greater than zero.</summary>
    public TimeSpan? AbsoluteExpirationRelativeToNow { get; init; }

    /// <summary>How long the entry lives without being read or refreshed; greater than zero.</summary>
    public TimeSpan? SlidingExpiration { get; init; }
}
