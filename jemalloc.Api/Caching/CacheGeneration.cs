using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc.Caching;

/// <summary>
/// What <see cref="NativeCache.Clear"/> drops at once: a <see cref="JemArena"/> and the shards whose
/// segments and tables live in it. A cleared generation's arena is disposed as soon as no lease pins
/// any of its segments: by the clear itself, or by the last lease's dispose.
/// </summary>
internal sealed unsafe class CacheGeneration
{
    private const string OwnerName = nameof(NativeCache);

    private readonly Lock _gate = new();
    private readonly List<CacheSegment> _retiredPinned = [];
    private readonly Action<CacheGeneration> _arenaGone;
    private long _heldBytes;
    // Once cleared: one for the clear itself, plus one per segment a lease still pins.
    private int _outstanding;
    private bool _cleared;
    // Set, under the gate, as the arena is disposed: statistics read it under the gate, so never a
    // destroyed arena nor another that reused its index.
    private bool _arenaDisposed;

    internal CacheGeneration(NativeCache cache, CacheBudget budget, int shardCount, int segmentBytes, bool hugePages, Action<CacheGeneration> arenaGone)
    {
        Budget = budget;
        SegmentBytes = segmentBytes;
        _arenaGone = arenaGone;
        Arena = new JemArena(budgetBytes: null, hugePages);
        Shards = new CacheShard[shardCount];
        for (int i = 0; i < shardCount; i++)
        {
            Shards[i] = new CacheShard(cache, this);
        }
    }

    internal JemArena Arena { get; }

    internal CacheShard[] Shards { get; }

    internal CacheBudget Budget { get; }

    /// <summary>The size requested for a standard segment.</summary>
    internal int SegmentBytes { get; }

    /// <summary>The open leases on segments retired when the generation was cleared or before (for Dispose's check).</summary>
    internal int RetiredPins
    {
        get
        {
            lock (_gate)
            {
                int pins = 0;
                foreach (CacheSegment segment in _retiredPinned)
                {
                    pins += segment.Pins;
                }

                return pins;
            }
        }
    }

    /// <summary>jemalloc's count of the bytes allocated in the arena; 0 once it is gone.</summary>
    internal long ArenaAllocatedBytes()
    {
        lock (_gate)
        {
            if (_arenaDisposed)
            {
                return 0;
            }

            ArenaStatistics statistics = Arena.GetStatistics();
            return statistics.SmallAllocatedBytes + statistics.LargeAllocatedBytes;
        }
    }

    /// <summary>
    /// Allocates a segment of at least <paramref name="size"/> bytes if the budget has room for its
    /// usable size; null if not.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The allocator has no memory (the budget is given back).</exception>
    internal CacheSegment? TryAllocateSegment(int size, bool large)
    {
        void* memory = TryAllocate(size, AllocationKind.CacheSegment, zero: false, out LedgerBlock block, out long held);
        return memory == null ? null : new CacheSegment(this, block, (byte*)memory, (int)Math.Min(held, int.MaxValue), held) { IsLarge = large };
    }

    /// <summary>Allocates a zeroed table if the budget has room; null if not.</summary>
    internal void* TryAllocateTable(long bytes, out LedgerBlock block, out long held) =>
        TryAllocate(bytes, AllocationKind.CacheIndex, zero: true, out block, out held);

    /// <summary>The usable size the allocator gives a request of <paramref name="bytes"/> in this generation's arena.</summary>
    internal long UsableSize(long bytes) => (long)Jem.Nallocx((nuint)bytes, Arena.Flags);

    /// <summary>Frees a segment the caller owns and gives its bytes back to the budget.</summary>
    internal void FreeSegment(CacheSegment segment) => FreeBlock(segment.Block, segment.HeldBytes);

    /// <summary>Frees a table and gives its bytes back to the budget.</summary>
    internal void FreeBlock(LedgerBlock block, long held)
    {
        block.Free(OwnerName);
        Interlocked.Add(ref _heldBytes, -held);
        Budget.Release(held);
    }

    /// <summary>
    /// Takes a segment out of its shard (under the shard's lock): true if no lease pins it, and the
    /// caller then owns it; otherwise the last lease frees it (<see cref="ReleaseRetired"/>).
    /// </summary>
    internal bool TryRetire(CacheSegment segment)
    {
        // Under the gate, so the last lease's release cannot come before the segment is listed.
        lock (_gate)
        {
            if (segment.TryRetire())
            {
                return true;
            }

            _retiredPinned.Add(segment);
            Budget.AddPinned(segment.HeldBytes);
            return false;
        }
    }

    /// <summary>The last lease on a retired segment ended: frees it, and once cleared, the arena after the last one.</summary>
    internal void ReleaseRetired(CacheSegment segment)
    {
        bool cleared;
        lock (_gate)
        {
            cleared = _cleared;
            _ = _retiredPinned.Remove(segment);
        }

        Budget.AddPinned(-segment.HeldBytes);
        FreeSegment(segment);
        if (cleared)
        {
            DropOutstanding();
        }
    }

    /// <summary>
    /// Drops the whole generation (its shards closed by the caller, so nothing else touches them):
    /// with no lease open on it, disposing the arena frees everything at once; otherwise the memory no
    /// lease pins is freed now and the arena goes with the last lease.
    /// </summary>
    internal void Drop()
    {
        lock (_gate)
        {
            _cleared = true;
            _outstanding = 1 + _retiredPinned.Count;
        }

        List<CacheSegment> unpinned = [];
        foreach (CacheShard shard in Shards)
        {
            shard.RetireAll(this, unpinned);
        }

        if (Volatile.Read(ref _outstanding) > 1)
        {
            foreach (CacheShard shard in Shards)
            {
                shard.FreeTables();
            }

            foreach (CacheSegment segment in unpinned)
            {
                FreeSegment(segment);
            }
        }

        DropOutstanding();
    }

    /// <summary>
    /// Retires one segment of a dropped generation: added to <paramref name="unpinned"/> if no lease
    /// pins it, otherwise listed and counted until its last lease ends.
    /// </summary>
    internal void RetireAtDrop(CacheSegment segment, List<CacheSegment> unpinned)
    {
        lock (_gate)
        {
            if (segment.TryRetire())
            {
                unpinned.Add(segment);
                return;
            }

            _retiredPinned.Add(segment);
            Interlocked.Increment(ref _outstanding);
            Budget.AddPinned(segment.HeldBytes);
        }
    }

    private void DropOutstanding()
    {
        if (Interlocked.Decrement(ref _outstanding) != 0)
        {
            return;
        }

        // Every block still in the arena goes with it.
        lock (_gate)
        {
            _arenaDisposed = true;
            Arena.Dispose();
        }

        Budget.Release(Interlocked.Exchange(ref _heldBytes, 0));
        _arenaGone(this);
    }

    private void* TryAllocate(long bytes, AllocationKind kind, bool zero, out LedgerBlock block, out long held)
    {
        block = default;
        held = UsableSize(bytes);
        if (held == 0 || !Budget.TryReserve(held))
        {
            return null;
        }

        void* memory;
        try
        {
            memory = LedgerBlock.Allocate((nuint)held, Arena.Options, kind, ElementTypes.IdOf<byte>(), out block, zero: zero);
        }
        catch
        {
            Budget.Release(held);
            throw;
        }

        Interlocked.Add(ref _heldBytes, held);
        return memory;
    }
}
