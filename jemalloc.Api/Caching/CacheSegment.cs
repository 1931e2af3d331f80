using jemalloc.Ledger;

namespace jemalloc.Caching;

/// <summary>
/// One segment of a <see cref="NativeCache"/> shard: a block of native memory that entries are
/// appended to (<see cref="CacheEntry"/> gives their layout), and the pin count of the leases that
/// read it.
/// </summary>
/// <remarks>
/// <see cref="_state"/> holds the pin count and, in its top bit, whether the segment was retired:
/// taken out of its shard while leases still pinned it. Exactly one thread sees the count reach zero
/// with the bit set (the last lease's <see cref="Unpin"/>), or the bit set with no pins
/// (<see cref="TryRetire"/>), and that thread decides what becomes of the memory.
/// </remarks>
internal sealed unsafe class CacheSegment
{
    private const int Retired = 1 << 30;
    private const int PinMask = Retired - 1;

    private int _state;

    internal CacheSegment(CacheGeneration generation, LedgerBlock block, byte* pointer, int capacity, long heldBytes)
    {
        Generation = generation;
        Block = block;
        Pointer = pointer;
        Capacity = capacity;
        HeldBytes = heldBytes;
    }

    /// <summary>The generation whose arena holds the memory.</summary>
    internal CacheGeneration Generation { get; }

    /// <summary>The memory's ledger block.</summary>
    internal LedgerBlock Block { get; }

    /// <summary>The memory's address.</summary>
    internal byte* Pointer { get; }

    /// <summary>The bytes entries may take (the allocator's usable size).</summary>
    internal int Capacity { get; }

    /// <summary>The bytes counted against the budget for it.</summary>
    internal long HeldBytes { get; }

    /// <summary>The bytes written so far (under the shard's lock).</summary>
    internal int Used { get; set; }

    /// <summary>
    /// The bytes of its entries that are dead (removed, replaced, dropped as expired) or slack after a
    /// value replaced in place (under the shard's lock): what reclaiming it gives back without evicting.
    /// </summary>
    internal long DeadBytes { get; set; }

    /// <summary>The segment's number in its shard while it is there; 0 otherwise (under the shard's lock).</summary>
    internal ushort Id { get; set; }

    /// <summary>The log the segment belongs to (under the shard's lock).</summary>
    internal int Log { get; set; }

    /// <summary>The latest deadline of its expiring entries as written, in milliseconds (under the shard's lock).</summary>
    internal long MaxDeadline { get; set; }

    /// <summary>When it joined its log, in the shard's order (under the shard's lock).</summary>
    internal long Sequence { get; set; }

    /// <summary>Whether it was allocated for one entry bigger than a standard segment.</summary>
    internal bool IsLarge { get; init; }

    /// <summary>The open leases on it now.</summary>
    internal int Pins => Volatile.Read(ref _state) & PinMask;

    /// <summary>Adds a lease; only under the shard's lock while the segment is in the shard.</summary>
    internal void Pin() => Interlocked.Increment(ref _state);

    /// <summary>Ends a lease; the last lease of a retired segment hands it back to its generation.</summary>
    internal void Unpin()
    {
        if (Interlocked.Decrement(ref _state) == Retired)
        {
            Generation.ReleaseRetired(this);
        }
    }

    /// <summary>
    /// Takes the segment out of use (under the shard's lock, or with the generation closed).
    /// </summary>
    /// <returns>Whether no lease pins it: the caller owns the memory. Otherwise the last lease's <see cref="Unpin"/> does.</returns>
    internal bool TryRetire() => (Interlocked.Or(ref _state, Retired) & PinMask) == 0;

    /// <summary>Makes a segment the caller owns (<see cref="TryRetire"/> returned true) empty and usable again.</summary>
    internal void Recycle()
    {
        Volatile.Write(ref _state, 0);
        Used = 0;
        DeadBytes = 0;
        MaxDeadline = 0;
        Id = 0;
    }
}
