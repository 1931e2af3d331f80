using jemalloc.Ledger;

namespace jemalloc.IO;

/// <summary>
/// The pins of a <see cref="NativeBufferWriter{T}"/>'s checked memories (<see cref="WriterMemory{T}.Pin"/>):
/// how many are open, each one an <c>Acquire()</c> of the writer's current block, so that the ledger
/// refuses to free it (an arena reset included) while a pin's pointer is used outside any check. While
/// any is open the writer refuses to grow, hand over or be disposed (<see cref="WriterBlocks{T}"/> asks
/// <see cref="IsPinned"/>). A mutable struct: keep it in a non-readonly field and call it through that field.
/// </summary>
internal struct WriterPins
{
    // The count of a writer whose finalizer ended the pins nobody could end any more.
    private const int EndedByFinalizer = int.MinValue;

    private int _count;

    /// <summary>Whether a pin is open (or the finalizer ended the pins: a resurrected writer stays refused).</summary>
    internal readonly bool IsPinned => Volatile.Read(in _count) != 0;

    /// <summary>Opens a pin of <paramref name="block"/>, the writer's current block; the caller holds the writer's guard.</summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It is already acquired the most times the ledger counts.</exception>
    internal void Add(LedgerBlock block, string ownerName)
    {
        block.Acquire(ownerName);
        Interlocked.Increment(ref _count);
    }

    /// <summary>
    /// Ends a pin of <paramref name="block"/>, the writer's current block (a pinned block is neither
    /// moved nor freed); nothing if the finalizer ended it already (its handle was resurrected by
    /// another object's finalizer).
    /// </summary>
    internal void End(LedgerBlock block, string ownerName)
    {
        if (Volatile.Read(ref _count) == EndedByFinalizer)
        {
            return;
        }

        // Released first: a dispose that sees no pin must find the block free to go.
        block.Release(ownerName);
        Interlocked.Decrement(ref _count);
    }

    /// <summary>For the finalizer: marks every pin ended (a later <see cref="End"/> does nothing) and returns how many were open.</summary>
    internal int EndAllForFinalizer() => Interlocked.Exchange(ref _count, EndedByFinalizer);
}
