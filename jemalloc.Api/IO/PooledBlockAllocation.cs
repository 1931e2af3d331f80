namespace jemalloc;

/// <summary>
/// One native block of a <see cref="JemMemoryPool"/>: its ledger allocation, address and size, and its
/// pool. It lives as long as the block and is shared by every rent of it, so that a rent's own object,
/// the <see cref="PooledBlock"/> a pipe allocates per segment, holds nothing but this and its state.
/// </summary>
internal sealed class PooledBlockAllocation
{
    internal PooledBlockAllocation(JemMemoryPool pool, AllocationHandle handle, nint pointer, int length)
    {
        Pool = pool;
        Handle = handle;
        Pointer = pointer;
        Length = length;
        AcquiredByRent = pool.Arena is not null;
    }

    /// <summary>
    /// Whether each rent holds an <c>Acquire()</c> of the block from the rent until its owner's dispose
    /// (or finalization): a pool in a <see cref="JemArena"/>, whose reset must not free a block a span
    /// of the owner can still reach, and is refused instead. Blocks outside an arena need none.
    /// </summary>
    internal bool AcquiredByRent { get; }

    /// <summary>The pool that allocated the block, and takes it back.</summary>
    internal JemMemoryPool Pool { get; }

    /// <summary>The block's ledger allocation: invalid once freed, by the pool or by a reset of its arena.</summary>
    internal AllocationHandle Handle { get; }

    /// <summary>The block's address.</summary>
    internal nint Pointer { get; }

    /// <summary>The block's size in bytes.</summary>
    internal int Length { get; }
}
