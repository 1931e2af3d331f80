namespace jemalloc;

/// <summary>
/// Thrown by <see cref="JemMemoryPool.Rent(int)"/> when the block would take the pool's outstanding
/// bytes past its budget. Nothing is rented and the pool stays usable: returning blocks makes room.
/// </summary>
/// <remarks>
/// It derives from <see cref="OutOfMemoryException"/>, like <see cref="ArenaBudgetExceededException"/>:
/// code that handles running out of memory handles a budget running out too.
/// </remarks>
public sealed class MemoryPoolBudgetExceededException : OutOfMemoryException
{
    /// <summary>Creates the exception for a refused rent.</summary>
    /// <param name="budgetBytes">The pool's budget.</param>
    /// <param name="outstandingBytes">The bytes rented and not returned when the rent was refused.</param>
    /// <param name="requestedBytes">The bytes the rent asked for.</param>
    public MemoryPoolBudgetExceededException(long budgetBytes, long outstandingBytes, long requestedBytes)
        : base($"The JemMemoryPool cannot rent {requestedBytes:N0} bytes: {outstandingBytes:N0} of its {budgetBytes:N0}-byte budget are rented and not returned, {Math.Max(budgetBytes - outstandingBytes, 0):N0} remain. Dispose the owners of blocks no longer used, or give the pool a larger budget.")
    {
        BudgetBytes = budgetBytes;
        OutstandingBytes = outstandingBytes;
        RequestedBytes = requestedBytes;
    }

    /// <summary>Creates the exception with a message.</summary>
    public MemoryPoolBudgetExceededException(string message) : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the error that caused it.</summary>
    public MemoryPoolBudgetExceededException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>Creates the exception with a default message.</summary>
    public MemoryPoolBudgetExceededException() : base("A rent would exceed the JemMemoryPool's byte budget.")
    {
    }

    /// <summary>The pool's budget in bytes.</summary>
    public long BudgetBytes { get; }

    /// <summary>The bytes rented and not returned when the rent was refused.</summary>
    public long OutstandingBytes { get; }

    /// <summary>The bytes the refused rent asked for.</summary>
    public long RequestedBytes { get; }
}
