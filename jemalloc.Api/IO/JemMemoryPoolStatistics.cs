namespace jemalloc;

/// <summary>A snapshot of a <see cref="JemMemoryPool"/>'s books, taken by <see cref="JemMemoryPool.GetStatistics"/>.</summary>
/// <param name="RentCount">How many blocks were rented since the pool was created.</param>
/// <param name="ReturnCount">How many of them were returned (their owner disposed).</param>
/// <param name="RentedBytes">The bytes of every block rented since the pool was created.</param>
/// <param name="ReturnedBytes">The bytes of every block returned since the pool was created.</param>
/// <param name="CachedCount">How many returned blocks the pool keeps now for its next rents.</param>
/// <param name="CachedBytes">The bytes of the blocks the pool keeps now for its next rents.</param>
/// <param name="SetAsideCount">
/// How many blocks of owners dropped without being disposed the pool holds until it is disposed
/// (neither freed nor reused, since a span of them may still be in use). Above zero, a program forgets to dispose owners.
/// </param>
/// <param name="SetAsideBytes">The bytes of those blocks.</param>
/// <remarks>A block counts as returned when its owner is disposed, even if a pin defers the block's return.</remarks>
public readonly record struct JemMemoryPoolStatistics(long RentCount, long ReturnCount, long RentedBytes, long ReturnedBytes, long CachedCount, long CachedBytes, long SetAsideCount, long SetAsideBytes)
{
    /// <summary>The blocks rented and not yet returned.</summary>
    public long OutstandingCount => RentCount - ReturnCount;

    /// <summary>The bytes of the blocks rented and not yet returned; what the pool's budget limits.</summary>
    public long OutstandingBytes => RentedBytes - ReturnedBytes;
}
