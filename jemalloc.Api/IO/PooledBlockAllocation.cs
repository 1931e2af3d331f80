using jemalloc.Ledger;

namespace jemalloc.IO;

/// <summary>
/// One native block of a <see cref="JemMemoryPool"/>: its ledger allocation, address and size, its
/// pool, and the state of its current rent. It lives as long as the block and is shared by every rent
/// of it, so that a rent's own object, the <see cref="PooledBlock"/> a pipe allocates per segment, is
/// a reference and a rent number, with no finalizer.
/// </summary>
/// <remarks>
/// <para>
/// The state is one word changed by compare-and-swap (no lock, which a caller could hold): the number
/// of the current rent (high half), whether its owner was disposed, its pins, and the unpins still
/// releasing their ledger acquisition (low half). An owner acts only while the word names its own
/// rent, so an owner kept after its block went to the next rent finds another number and counts as
/// disposed. A block is retired (freed, not kept) before its rent number could come round again.
/// </para>
/// <para>
/// The current owner is held through a short weak reference: once the garbage collector finds the
/// owner unreachable without having given its block back, the pool's sweep (<see cref="TryAbandon"/>)
/// does what an owner's finalizer would, without a finalizable object per rent.
/// </para>
/// </remarks>
internal sealed class PooledBlockAllocation
{
    internal const int MaxPins = 0x7FFF;
    internal const long PinMask = 0x7FFF;
    internal const long OneReleasing = 1 << 15;
    internal const long ReleasingMask = 0x7FFFL << 15;
    internal const long Disposed = 1 << 30;

    // Set by the sweep, with Disposed: the owner was found dropped, its books and pins were settled
    // and its block set aside. A reference a finalizer resurrects can no longer give the block back
    // (to the cache, where it would belong to two rents) nor end a pin.
    internal const long Abandoned = 1L << 31;

    /// <summary>The last rent number of a block: its return then frees it, so no rent number comes round again.</summary>
    internal const uint LastRent = uint.MaxValue - 1;

    private readonly WeakReference<PooledBlock> _owner = new(null!);

    /// <summary>The current rent's number (high half) and state (low half); see the remarks.</summary>
    internal long State;

    internal PooledBlockAllocation(JemMemoryPool pool, LedgerBlock block, nint pointer, int length)
    {
        Pool = pool;
        LedgerBlock = block;
        Pointer = pointer;
        Length = length;
        AcquiredByRent = pool.Arena is not null;
        // Rent 0 is never handed out: a new block reads as given back.
        State = Disposed;
    }

    /// <summary>
    /// Whether each rent holds an <c>Acquire()</c> of the block from the rent until its owner's dispose
    /// (or abandonment): a pool in a <see cref="JemArena"/>, whose reset must not free a block a span
    /// of the owner can still reach, and is refused instead. Blocks outside an arena need none.
    /// </summary>
    internal bool AcquiredByRent { get; }

    /// <summary>The pool that allocated the block, and takes it back.</summary>
    internal JemMemoryPool Pool { get; }

    /// <summary>The block's ledger allocation: no longer live once freed, by the pool or by a reset of its arena.</summary>
    internal LedgerBlock LedgerBlock { get; }

    /// <summary>The block's address.</summary>
    internal nint Pointer { get; }

    /// <summary>The block's size in bytes.</summary>
    internal int Length { get; }

    /// <summary>Whether the block has been rented the most times it counts: it is freed instead of kept.</summary>
    internal bool IsSpent => RentOf(Volatile.Read(ref State)) >= LastRent;

    /// <summary>Whether the block was given back by its last rent (and is not rented now).</summary>
    internal bool IsBack => (Volatile.Read(ref State) & ~unchecked((long)0xFFFF_FFFF_0000_0000)) == Disposed;

    /// <summary>The rent number of a state word.</summary>
    internal static uint RentOf(long state) => (uint)((ulong)state >> 32);

    /// <summary>Starts a new rent of a block that is back (kept or new): returns its owner.</summary>
    internal PooledBlock Rent()
    {
        uint rent = RentOf(Volatile.Read(ref State)) + 1;
        var owner = new PooledBlock(this, rent);
        // The owner is known before the rent is published, so a sweep never sees the new rent with an
        // earlier owner's cleared reference.
        _owner.SetTarget(owner);
        Volatile.Write(ref State, (long)((ulong)rent << 32));
        return owner;
    }

    /// <summary>
    /// If the current rent's owner was dropped (the garbage collector cleared it) before it gave the
    /// block back, marks the rent abandoned. Returns the state it had then, or -1 if it was not dropped.
    /// </summary>
    internal long TryAbandon()
    {
        long state = Volatile.Read(ref State);
        long low = state & 0xFFFF_FFFF;
        if (low == Disposed || (low & (Abandoned | ReleasingMask)) != 0 || _owner.TryGetTarget(out _))
        {
            // Given back, already abandoned, an unpin still running (it gives the block back or leaves
            // it to the next sweep), or its owner is still reachable.
            return -1;
        }

        // Fails if the rent changed meanwhile (a later rent's owner is reachable until the next sweep).
        long abandoned = (state & unchecked((long)0xFFFF_FFFF_0000_0000)) | Disposed | Abandoned;
        return Interlocked.CompareExchange(ref State, abandoned, state) == state ? low : -1;
    }
}
