using System.Buffers;
using jemalloc.IO;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// A <see cref="MemoryPool{T}"/> of native blocks: a <see cref="Rent(int)"/> takes a block the pool
/// kept from an earlier rent, or allocates one through the library's one allocation path (in a
/// <see cref="JemArena"/> if one is given); the owner's <see cref="IDisposable.Dispose"/> gives it back.
/// Thread-safe: any thread may rent, and any thread may return any block.
/// </summary>
/// <remarks>
/// <para>
/// Every rent gets its own owner, and the owner's <see cref="IMemoryOwner{T}.Memory"/> throws
/// <see cref="ObjectDisposedException"/> once the owner is disposed; so does every
/// <see cref="Memory{T}.Span"/> and <see cref="Memory{T}.Pin"/> of a <see cref="Memory{T}"/> taken from
/// it before (the memory is a <see cref="MemoryManager{T}"/> that checks on every call), even after the
/// block went to another rent. A <see cref="Span{T}"/> already taken cannot be checked: as with every
/// <see cref="IMemoryOwner{T}"/>, disposing the owner is the promise that no span of it is still in use.
/// A pin (<see cref="Memory{T}.Pin"/>, as sockets take) holds the block: an owner disposed while pinned
/// is counted as returned at once, but its block goes back to the pool at the last unpin.
/// </para>
/// <para>
/// Blocks come in the powers of two from 64 bytes, as <see cref="MemoryPool{T}.Shared"/>'s arrays do,
/// and <see cref="IMemoryOwner{T}.Memory"/> is the whole block: a pipe fills what is left of a block
/// before it rents another. Returned blocks of up to 1 MiB are kept for the next rents of their size,
/// each size up to an equal share of <see cref="MaxCachedBytes"/>;
/// <see cref="Trim"/> and <see cref="MemoryPool{T}.Dispose()"/> free them. In checked mode
/// (<see cref="AllocationLedger.CheckedMode"/>) no block is kept or handed out from what was kept
/// before: each is freed, poisoned and quarantined, so a span used after its owner's dispose is caught.
/// </para>
/// <para>
/// In a <see cref="JemArena"/>, a rented block holds back the arena's <see cref="JemArena.Reset"/> and
/// <see cref="JemArena.Dispose"/>: they throw <see cref="InvalidOperationException"/>, naming the rented
/// blocks, until every owner is disposed (and every pin ended), because a span taken from an owner
/// cannot be checked and would otherwise write into whatever the arena allocates next. The blocks the
/// pool keeps for later rents are freed by the reset, and the next rents allocate new ones.
/// </para>
/// <para>
/// Disposing the pool frees the kept blocks and refuses later rents; blocks rented before stay usable
/// until their owners are disposed, and are then freed. An owner dropped without being disposed goes
/// back to the pool's budget and books once a garbage collection has found it unreachable (the pool
/// looks after each collection, and before its books are read or its budget refuses a rent; owners
/// have no finalizer, which would cost more than the rest of a rent), but its block is set
/// aside, neither freed nor reused, because a <see cref="Span{T}"/> of it may still be in use (a span
/// does not keep its owner alive); the pool's <see cref="MemoryPool{T}.Dispose()"/> frees those
/// blocks (a reset of the pool's arena frees them too, as it frees every block of the arena, even one
/// whose dropped pin was never ended). A pool dropped without being disposed frees its kept blocks
/// when it is finalized; the set-aside blocks of its dropped owners stay allocated (a span of them may
/// still be in use) until a reset of its arena, or for good.
/// </para>
/// <para>
/// It cannot be Kestrel's pool (ASP.NET Core 10): Kestrel takes its pools from the
/// <c>IMemoryPoolFactory&lt;byte&gt;</c> in dependency injection, but its socket transport sends a
/// response of several blocks through <c>SocketAsyncEventArgs.BufferList</c>, which takes only managed
/// arrays, and resets the connection for native blocks.
/// </para>
/// </remarks>
/// <example>
/// <code>
/// using var pool = new JemMemoryPool(budgetBytes: 64 &lt;&lt; 20);
/// var pipe = new Pipe(new PipeOptions(pool: pool));
/// </code>
/// </example>
public sealed class JemMemoryPool : MemoryPool<byte>
{
    /// <summary>The size of the block <c>Rent()</c> (or <c>Rent(-1)</c>) gives, as <see cref="MemoryPool{T}.Shared"/> does.</summary>
    public const int DefaultBufferSize = 4096;

    /// <summary>The bytes of returned blocks a pool keeps for its next rents unless told otherwise.</summary>
    public const long DefaultMaxCachedBytes = 16L << 20;

    private readonly int _maxBufferSize;
    private readonly long _budgetBytes;
    private readonly AllocationOptions? _arenaOptions;
    private readonly PooledBlockCache _cache;
    private long _outstandingBytes;
    private int _disposed;
    private readonly Lock _setAsideGate = new();
    private List<PooledBlockAllocation>? _setAside;
    private bool _setAsideFreed;
    private int _setAsidePruneAt = 64;

    // Every block this pool allocated that a rent may still hold, for the sweep that finds owners
    // dropped without Dispose (owners have no finalizer); pruned of freed and abandoned blocks.
    private readonly Lock _blocksGate = new();
    private readonly List<PooledBlockAllocation> _blocks = [];
    private int _blocksPruneAt = 64;

    /// <summary>Creates a pool of native blocks.</summary>
    /// <param name="maxBufferSize">The largest block <see cref="Rent(int)"/> gives, in bytes.</param>
    /// <param name="arena">The arena to allocate in (counted against its budget; its reset is refused while a block is rented, and frees the kept blocks), or null for jemalloc's automatic arenas.</param>
    /// <param name="budgetBytes">The most bytes the pool's owners may hold at once (rented and not returned), or null for no limit.</param>
    /// <param name="clearBlocks">
    /// Whether a rented block reads as zero. By default it holds whatever the memory held, as a block of
    /// <see cref="MemoryPool{T}.Shared"/> does: pipes and sockets write before they read, and clearing
    /// every block would cost a pass over all the bytes that flow through the pool. A kept block is
    /// cleared once its rent holds it, so a reset of the pool's arena cannot free it under the clear.
    /// </param>
    /// <param name="maxCachedBytes">The most bytes of returned blocks the pool keeps for its next rents; 0 keeps none.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxBufferSize"/> or <paramref name="budgetBytes"/> is zero or negative, or <paramref name="maxCachedBytes"/> is negative.</exception>
    public JemMemoryPool(int maxBufferSize = int.MaxValue, JemArena? arena = null, long? budgetBytes = null, bool clearBlocks = false, long maxCachedBytes = DefaultMaxCachedBytes)
    {
        if (maxBufferSize <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(maxBufferSize), maxBufferSize, "The largest block must be at least one byte.");
        }

        if (budgetBytes is <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(budgetBytes), budgetBytes, "A budget must be at least one byte; pass null for no limit.");
        }

        if (maxCachedBytes < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(maxCachedBytes), maxCachedBytes, "The cache limit must be 0 (keep no blocks) or more bytes.");
        }

        _maxBufferSize = maxBufferSize;
        _budgetBytes = budgetBytes ?? long.MaxValue;
        _arenaOptions = arena?.Options;
        _cache = new PooledBlockCache(maxCachedBytes);
        Arena = arena;
        ClearsBlocks = clearBlocks;
        MaxCachedBytes = maxCachedBytes;
        PoolSweepTrigger.Start(this);
    }

    /// <summary>Frees the kept blocks of a pool that was dropped without being disposed.</summary>
    ~JemMemoryPool()
    {
        // A constructor that refused its arguments is finalized too, with nothing to free.
        if (_cache is not null)
        {
            Dispose(disposing: false);
        }
    }

    /// <summary>The largest block <see cref="Rent(int)"/> gives, in bytes.</summary>
    public override int MaxBufferSize => _maxBufferSize;

    /// <summary>The arena the blocks are allocated in, or null for jemalloc's automatic arenas.</summary>
    public JemArena? Arena { get; }

    /// <summary>The most bytes the pool's owners may hold at once, or null for no limit.</summary>
    public long? BudgetBytes => _budgetBytes == long.MaxValue ? null : _budgetBytes;

    /// <summary>Whether a rented block reads as zero (otherwise it holds whatever the memory held).</summary>
    public bool ClearsBlocks { get; }

    /// <summary>The most bytes of returned blocks the pool keeps for its next rents.</summary>
    public long MaxCachedBytes { get; }

    /// <summary>Whether the pool was disposed (it then refuses rents).</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// Rents a native block (zero-filled if <see cref="ClearsBlocks"/>) of at least
    /// <paramref name="minBufferSize"/> bytes (<see cref="DefaultBufferSize"/> for -1): the power of
    /// two at or above the request (at least 64 bytes), or <see cref="MaxBufferSize"/> where that power
    /// of two would pass it. Dispose the owner to return it.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minBufferSize"/> is below -1 or above <see cref="MaxBufferSize"/>.</exception>
    /// <exception cref="ObjectDisposedException">The pool was disposed, or its arena destroyed.</exception>
    /// <exception cref="MemoryPoolBudgetExceededException">The block would take the pool's outstanding bytes past its budget.</exception>
    /// <exception cref="ArenaBudgetExceededException">The block would exceed the arena's budget.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the block.</exception>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        if (minBufferSize < -1 || minBufferSize > _maxBufferSize)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(minBufferSize), minBufferSize, $"A block must be -1 (the default size) or 0 to {_maxBufferSize:N0} bytes.");
        }

        int requested = minBufferSize == -1 ? Math.Min(DefaultBufferSize, _maxBufferSize) : Math.Max(minBufferSize, 1);
        int size = PooledBlockCache.BlockSizeFor(requested, _maxBufferSize);
        if (_budgetBytes != long.MaxValue && !TryReserve(size, out _))
        {
            // Owners dropped without Dispose that a collection found since the last sweep give their bytes back.
            SweepDroppedOwners();
            if (!TryReserve(size, out long outstanding))
            {
                // The figure that refused the rent, not a fresh read: other threads may have returned blocks since.
                throw new MemoryPoolBudgetExceededException(_budgetBytes, outstanding, size);
            }
        }

        PooledBlockAllocation block;
        try
        {
            block = TakeBlock(size);
        }
        catch
        {
            ReleaseBudget(size);
            throw;
        }

        return block.Rent();
    }

    /// <summary>Frees the returned blocks the pool keeps; rented blocks are not touched.</summary>
    public void Trim() => _cache.Trim(close: false);

    /// <summary>A snapshot of the pool's books: blocks and bytes rented, returned, outstanding and kept.</summary>
    public JemMemoryPoolStatistics GetStatistics()
    {
        SweepDroppedOwners();
        (long rents, long returns, long rentedBytes, long returnedBytes, long keptCount, long keptBytes) = _cache.Totals();
        long setAsideCount = 0;
        long setAsideBytes = 0;
        lock (_setAsideGate)
        {
            // Blocks an arena reset freed are no longer held, though they stay listed.
            foreach (PooledBlockAllocation block in _setAside ?? [])
            {
                if (block.LedgerBlock.IsLive)
                {
                    setAsideCount++;
                    setAsideBytes += block.Length;
                }
            }
        }

        return new JemMemoryPoolStatistics(rents, returns, rentedBytes, returnedBytes, keptCount, keptBytes, setAsideCount, setAsideBytes);
    }

    /// <summary>
    /// Finds the rents whose owner the garbage collector found unreachable before it gave its block
    /// back, and settles them (<see cref="PooledBlock.SettleAbandoned"/>): run after each collection
    /// (<see cref="PoolSweepTrigger"/>), and before the books are read or the budget refuses a rent.
    /// </summary>
    internal void SweepDroppedOwners()
    {
        List<(PooledBlockAllocation Block, long State)>? abandoned = null;
        lock (_blocksGate)
        {
            foreach (PooledBlockAllocation block in _blocks)
            {
                long state = block.TryAbandon();
                if (state >= 0)
                {
                    if ((state & PooledBlockAllocation.Disposed) == 0)
                    {
                        // Given back under the gate: a sweep on another thread (the one after each collection
                        // runs on the finalizer thread) waits here instead of finding the owner claimed and
                        // its bytes not yet returned, which would refuse a rent the budget has room for.
                        OnOwnerGone(block.Length);
                    }

                    (abandoned ??= []).Add((block, state));
                }
            }

            PruneBlocks();
        }

        foreach ((PooledBlockAllocation block, long state) in abandoned ?? [])
        {
            PooledBlock.SettleAbandoned(block, state);
        }
    }

    /// <summary>The owner of a block was disposed (or abandoned) while its block is still held: the books count the return now.</summary>
    internal void OnOwnerGone(int size)
    {
        ReleaseBudget(size);
        _cache.CountReturn(size);
    }

    /// <summary>
    /// The block of a rent that nothing holds any more, counted as returned now if
    /// <paramref name="ownerGoneNow"/> (otherwise <see cref="OnOwnerGone"/> counted it): kept for the
    /// next rent of its class, or freed (in checked mode, past the cache's limits, after the pool's
    /// dispose, or if an arena reset freed it already).
    /// </summary>
    internal void ReturnBlock(PooledBlockAllocation block, bool ownerGoneNow)
    {
        if (ownerGoneNow)
        {
            ReleaseBudget(block.Length);
        }

        bool keep = !AllocationLedger.CheckedMode && block.LedgerBlock.IsLive && !block.IsSpent;
        if (!_cache.Return(block, ownerGoneNow, keep))
        {
            block.LedgerBlock.FreeOwned();
        }
    }

    /// <summary>
    /// The block of an owner the garbage collector found dropped: a span of it may still be in use, so
    /// it waits for the pool's dispose (or is freed at once if the pool was disposed already).
    /// </summary>
    internal void SetAside(PooledBlockAllocation block)
    {
        lock (_setAsideGate)
        {
            if (!_setAsideFreed)
            {
                // Forgets the blocks arena resets freed meanwhile, so resets do not grow the list; only
                // when it has doubled since, so a program that drops many owners costs no scan per drop.
                _setAside ??= [];
                if (_setAside.Count >= _setAsidePruneAt)
                {
                    _setAside.RemoveAll(entry => !entry.LedgerBlock.IsLive);
                    _setAsidePruneAt = Math.Max(64, 2 * _setAside.Count);
                }

                _setAside.Add(block);
                return;
            }
        }

        block.LedgerBlock.FreeOwned();
    }

    /// <summary>
    /// Frees the kept blocks and refuses later rents; blocks already rented stay usable until returned.
    /// A dispose also frees the blocks of owners that were dropped without being disposed; a
    /// finalization does not, since a span of such a block may still be in use.
    /// </summary>
    protected override void Dispose(bool disposing)
    {
        Volatile.Write(ref _disposed, 1);
        _cache.Trim(close: true);
        // Finalized, the pool is unreachable, and so is every owner (each references the pool): the
        // sweep ends their rents' acquisitions and pins, so a reset of the arena can free their blocks.
        SweepDroppedOwners();
        if (!disposing)
        {
            return;
        }

        List<PooledBlockAllocation>? setAside;
        lock (_setAsideGate)
        {
            _setAsideFreed = true;
            setAside = _setAside;
            _setAside = null;
        }

        foreach (PooledBlockAllocation block in setAside ?? [])
        {
            block.LedgerBlock.FreeOwned();
        }
    }

    private unsafe PooledBlockAllocation TakeBlock(int size)
    {
        // A kept block that an arena reset freed before the rent could acquire it is left to the reset: a new one is allocated.
        // Checked mode hands out no kept block, not even one kept before it was turned on: a span of
        // the block's last owner must read poison, which only a free through the quarantine gives.
        PooledBlockAllocation? kept = _cache.Rent(size, take: !AllocationLedger.CheckedMode);
        if (kept is not null && (!kept.AcquiredByRent || TryAcquire(kept)))
        {
            if (ClearsBlocks)
            {
                // Acquired (or outside any arena): no reset can free it under the clear.
                new Span<byte>((void*)kept.Pointer, kept.Length).Clear();
            }

            return kept;
        }

        AllocationOptions options = _arenaOptions ?? HugePagePolicy.DefaultForSize((nuint)size);
        LedgerBlock allocated;
        nint pointer;
        try
        {
            try
            {
                pointer = (nint)LedgerBlock.Allocate((nuint)size, options, AllocationKind.MemoryPoolBlock, ElementTypes.IdOf<byte>(), out allocated, zero: ClearsBlocks, acquired: _arenaOptions is not null);
            }
            catch (ArenaBudgetExceededException) when (_cache.Trim(close: false) > 0)
            {
                // The blocks this pool kept counted against the arena's budget too: they were given up.
                pointer = (nint)LedgerBlock.Allocate((nuint)size, options, AllocationKind.MemoryPoolBlock, ElementTypes.IdOf<byte>(), out allocated, zero: ClearsBlocks, acquired: _arenaOptions is not null);
            }
        }
        catch
        {
            _cache.Uncount(size);
            throw;
        }

        var block = new PooledBlockAllocation(this, allocated, pointer, size);
        lock (_blocksGate)
        {
            if (_blocks.Count >= _blocksPruneAt)
            {
                PruneBlocks();
            }

            _blocks.Add(block);
        }

        return block;
    }

    // Forgets the blocks no rent can hold again: freed while back with the pool, or abandoned (set aside).
    // Caller holds _blocksGate; amortized by doubling the mark.
    private void PruneBlocks()
    {
        _blocks.RemoveAll(block => (Volatile.Read(ref block.State) & PooledBlockAllocation.Abandoned) != 0 || (block.IsBack && !block.LedgerBlock.IsLive));
        _blocksPruneAt = Math.Max(64, 2 * _blocks.Count);
    }

    /// <summary>
    /// Takes the rent's acquisition of a kept block of an arena pool, which a reset of the arena then
    /// refuses to free until the owner is disposed.
    /// </summary>
    /// <returns><see langword="false"/> if an arena reset freed the block since the cache handed it out.</returns>
    private static bool TryAcquire(PooledBlockAllocation block)
    {
        try
        {
            block.LedgerBlock.Acquire(PooledBlock.OwnerName);
            return true;
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
    }

    private void ReleaseBudget(int size)
    {
        if (_budgetBytes != long.MaxValue)
        {
            Interlocked.Add(ref _outstandingBytes, -size);
        }
    }

    private bool TryReserve(int size, out long outstanding)
    {
        while (true)
        {
            outstanding = Volatile.Read(ref _outstandingBytes);
            if (size > _budgetBytes - outstanding)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _outstandingBytes, outstanding + size, outstanding) == outstanding)
            {
                return true;
            }
        }
    }
}
