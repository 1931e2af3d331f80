namespace jemalloc;

/// <summary>
/// Thrown when an allocation in a <see cref="JemArena"/> would take its used bytes past the
/// arena's budget. Nothing is allocated and the arena stays usable: smaller allocations, frees and
/// <see cref="JemArena.Reset"/> all still work.
/// </summary>
/// <remarks>
/// It derives from <see cref="OutOfMemoryException"/>: code that already handles running out of
/// memory handles a budget running out too, while code that wants to tell them apart catches this
/// type first.
/// </remarks>
public sealed class ArenaBudgetExceededException : OutOfMemoryException
{
    /// <summary>Creates the exception for a refused allocation.</summary>
    /// <param name="arenaIndex">The arena's jemalloc index.</param>
    /// <param name="budgetBytes">The arena's budget.</param>
    /// <param name="usedBytes">The bytes in use when the allocation was refused.</param>
    /// <param name="requestedBytes">The bytes the allocation would have taken (its jemalloc size class).</param>
    public ArenaBudgetExceededException(uint arenaIndex, long budgetBytes, long usedBytes, long requestedBytes)
        : base($"Arena {arenaIndex} cannot allocate {requestedBytes:N0} bytes: {usedBytes:N0} of its {budgetBytes:N0}-byte budget are in use, {Math.Max(budgetBytes - usedBytes, 0):N0} remain. Free or reset memory in the arena, or give it a larger budget.")
    {
        ArenaIndex = arenaIndex;
        BudgetBytes = budgetBytes;
        UsedBytes = usedBytes;
        RequestedBytes = requestedBytes;
    }

    /// <summary>Creates the exception with a message.</summary>
    public ArenaBudgetExceededException(string message) : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the error that caused it.</summary>
    public ArenaBudgetExceededException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>Creates the exception with a default message.</summary>
    public ArenaBudgetExceededException() : base("An allocation would exceed the arena's byte budget.")
    {
    }

    /// <summary>The arena's jemalloc index.</summary>
    public uint ArenaIndex { get; }

    /// <summary>The arena's budget in bytes.</summary>
    public long BudgetBytes { get; }

    /// <summary>The bytes in use in the arena when the allocation was refused.</summary>
    public long UsedBytes { get; }

    /// <summary>The bytes the refused allocation would have taken: its jemalloc size class.</summary>
    public long RequestedBytes { get; }
}
