namespace jemalloc.Caching;

/// <summary>
/// The bytes a <see cref="NativeCache"/> holds from the allocator, across its shards and generations:
/// each block is reserved here, at its usable size, before it is allocated, so the total never
/// passes the budget.
/// </summary>
internal sealed class CacheBudget
{
    private long _allocated;
    private long _pinned;

    internal CacheBudget(long limit) => Limit = limit;

    /// <summary>The budget.</summary>
    internal long Limit { get; }

    /// <summary>The bytes held now.</summary>
    internal long Allocated => Volatile.Read(ref _allocated);

    /// <summary>Of <see cref="Allocated"/>, the bytes only open leases keep (segments retired under them).</summary>
    internal long Pinned => Volatile.Read(ref _pinned);

    /// <summary>Reserves <paramref name="bytes"/> if they fit.</summary>
    internal bool TryReserve(long bytes)
    {
        long current = Volatile.Read(ref _allocated);
        while (true)
        {
            if (bytes > Limit - current)
            {
                return false;
            }

            long seen = Interlocked.CompareExchange(ref _allocated, current + bytes, current);
            if (seen == current)
            {
                return true;
            }

            current = seen;
        }
    }

    /// <summary>Gives back <paramref name="bytes"/> reserved before.</summary>
    internal void Release(long bytes) => Interlocked.Add(ref _allocated, -bytes);

    /// <summary>Counts <paramref name="bytes"/> as kept only by leases (positive) or no longer (negative).</summary>
    internal void AddPinned(long bytes) => Interlocked.Add(ref _pinned, bytes);
}
