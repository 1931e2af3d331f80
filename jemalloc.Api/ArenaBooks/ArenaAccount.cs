using jemalloc.HugePages;
using jemalloc.Interop;
using jemalloc.Internal;
using jemalloc.Mallctl;

namespace jemalloc.ArenaBooks;

/// <summary>
/// The book-keeping of one <see cref="JemArena"/>: its byte budget, used and peak bytes, and a gate
/// that lets any number of allocations and frees run at once but none while the arena is being
/// reset or destroyed (so no allocation can slip past a reset's invalidation, and no free can hand
/// memory back that the reset already freed).
/// </summary>
internal sealed class ArenaAccount
{
    /// <summary>The public type an account stands for, named in its exceptions (JemArena is in a later layer).</summary>
    internal const string OwnerTypeName = "JemArena";

    internal const long Unlimited = long.MaxValue;
    private const long InFlightMask = (1L << 40) - 1;
    private const long ClosedBit = 1L << 40;
    private const long DestroyedBit = 1L << 41;

    private long _gate;
    private int _waiting;
    private long _used;
    private long _peak;
    private volatile bool _arenaGone;
    // 0: the arena is the account's; 1: reset for the pool, waiting for the destroyed bit; 2: handed to the pool.
    private int _keeping;

    internal ArenaAccount(uint index, long budget, ArenaCounts startCounts = default)
    {
        Index = index;
        Budget = budget;
        StartCounts = startCounts;
    }

    internal uint Index { get; }

    internal long Budget { get; }

    internal long Used => Volatile.Read(ref _used);

    internal long Peak => Volatile.Read(ref _peak);

    /// <summary>jemalloc's allocation counters of the arena when this account got it: zero for a new arena, a previous owner's for a pooled one.</summary>
    internal ArenaCounts StartCounts { get; }

    /// <summary>The arena's allocation counters as the account gave it up to the <see cref="ArenaPool"/> (its next owner's <see cref="StartCounts"/>).</summary>
    internal ArenaCounts EndCounts { get; private set; }

    internal bool IsDestroyed => (Volatile.Read(ref _gate) & DestroyedBit) != 0;

    /// <summary>
    /// Whether jemalloc's arena itself is destroyed, so its index may name an arena made since. A
    /// checked-mode dispose marks the account destroyed first and destroys the arena only once the
    /// quarantine lets its last block go; until then the index is still this arena's.
    /// </summary>
    internal bool IsArenaGone => _arenaGone;

    /// <summary>
    /// Memory an arena reset may free must never sit in a thread cache: whatever thread cache the
    /// caller's flags name is replaced by none.
    /// </summary>
    internal static int WithoutThreadCache(int flags) => (flags & ~MallocxFlags.TcacheMask) | MallocxFlags.TcacheNoneBits;

    /// <summary>Enters the gate, waiting while a reset runs.</summary>
    /// <returns><see langword="false"/> if the arena was destroyed (nothing entered).</returns>
    internal bool TryEnter()
    {
        long gate = Volatile.Read(ref _gate);
        if ((gate & (ClosedBit | DestroyedBit)) == 0 && Interlocked.CompareExchange(ref _gate, gate + 1, gate) == gate)
        {
            return true;
        }

        // Counted as waiting, so the next reset lets this caller in first (CloseAndDrain): resets
        // in a tight loop must not starve allocation.
        Interlocked.Increment(ref _waiting);
        try
        {
            var spin = default(SpinWait);
            while (true)
            {
                gate = Volatile.Read(ref _gate);
                if ((gate & DestroyedBit) != 0)
                {
                    return false;
                }

                if ((gate & ClosedBit) == 0 && Interlocked.CompareExchange(ref _gate, gate + 1, gate) == gate)
                {
                    return true;
                }

                spin.SpinOnce();
            }
        }
        finally
        {
            Interlocked.Decrement(ref _waiting);
        }
    }

    /// <summary>
    /// Enters the gate even while it is closed: only for the free of a disposed structure's memory,
    /// which a reset in progress waits for (see <see cref="AllocationLedger.InvalidateArena"/>).
    /// </summary>
    /// <returns><see langword="false"/> if the arena was destroyed (nothing entered).</returns>
    internal bool TryEnterPastReset()
    {
        while (true)
        {
            long gate = Volatile.Read(ref _gate);
            if ((gate & DestroyedBit) != 0)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _gate, gate + 1, gate) == gate)
            {
                return true;
            }
        }
    }

    /// <summary>Enters the gate, waiting while a reset runs.</summary>
    /// <exception cref="ObjectDisposedException">The arena was destroyed.</exception>
    internal void Enter()
    {
        if (!TryEnter())
        {
            ThrowDestroyed();
        }
    }

    internal void Exit() => Interlocked.Decrement(ref _gate);

    /// <summary>
    /// Enters the gate and charges an allocation of <paramref name="size"/> bytes with
    /// <paramref name="flags"/> (its jemalloc size class) against the budget. The caller must
    /// <see cref="Exit"/>, and <see cref="Refund"/> the charge if the allocation then fails.
    /// </summary>
    /// <returns>The bytes charged.</returns>
    /// <exception cref="ObjectDisposedException">The arena was destroyed.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed the budget.</exception>
    /// <exception cref="OutOfMemoryException">The size is beyond anything jemalloc can allocate.</exception>
    internal unsafe long EnterAndCharge(nuint size, int flags)
    {
        nuint sizeClass = JemNative.Nallocx(size, flags);
        if (sizeClass == 0 || sizeClass > long.MaxValue)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        Enter();
        try
        {
            Charge((long)sizeClass);
        }
        catch
        {
            Exit();
            throw;
        }

        return (long)sizeClass;
    }

    /// <exception cref="ArenaBudgetExceededException">The charge would exceed the budget.</exception>
    internal void Charge(long bytes)
    {
        long used;
        if (Budget == Unlimited)
        {
            used = Interlocked.Add(ref _used, bytes);
        }
        else
        {
            while (true)
            {
                long current = Volatile.Read(ref _used);
                if (bytes > Budget - current)
                {
                    throw new ArenaBudgetExceededException(Index, Budget, current, bytes);
                }

                used = current + bytes;
                if (Interlocked.CompareExchange(ref _used, used, current) == current)
                {
                    break;
                }
            }
        }

        long peak = Volatile.Read(ref _peak);
        while (used > peak)
        {
            long seen = Interlocked.CompareExchange(ref _peak, used, peak);
            if (seen == peak)
            {
                break;
            }

            peak = seen;
        }
    }

    internal void Refund(long bytes) => Interlocked.Add(ref _used, -bytes);

    /// <summary>
    /// Lets in the callers waiting at the gate, closes it and waits until every allocation and free in
    /// flight has left it: from then on only the caller touches the arena. Concurrent resets take turns.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The arena was destroyed.</exception>
    internal void CloseAndDrain()
    {
        var spin = default(SpinWait);

        // Callers that waited through the previous reset go first; callers arriving now enter at
        // once while the gate is open, so this wait ends.
        while (Volatile.Read(ref _waiting) != 0 && (Volatile.Read(ref _gate) & DestroyedBit) == 0)
        {
            spin.SpinOnce();
        }

        while (true)
        {
            long gate = Volatile.Read(ref _gate);
            if ((gate & DestroyedBit) != 0)
            {
                ThrowDestroyed();
            }

            if ((gate & ClosedBit) == 0 && Interlocked.CompareExchange(ref _gate, gate | ClosedBit, gate) == gate)
            {
                break;
            }

            spin.SpinOnce();
        }

        WaitUntilEmpty();
    }

    /// <summary>With the gate closed: waits until nothing is in flight (the frees let in past a reset have left).</summary>
    internal void WaitUntilEmpty()
    {
        var spin = default(SpinWait);
        while ((Volatile.Read(ref _gate) & InFlightMask) != 0)
        {
            spin.SpinOnce();
        }
    }

    /// <summary>Opens the gate closed by <see cref="CloseAndDrain"/>; after a reset, nothing is in use any more.</summary>
    internal void Reopen(bool cleared)
    {
        if (cleared)
        {
            Volatile.Write(ref _used, 0);
        }

        Interlocked.And(ref _gate, ~ClosedBit);
    }

    /// <summary>
    /// Marks the arena destroyed and opens the gate closed by <see cref="CloseAndDrain"/>: every later
    /// entry fails. An arena <see cref="RetireArena">retired</see> into the pool goes there now.
    /// </summary>
    internal void MarkDestroyed()
    {
        Volatile.Write(ref _used, 0);
        Interlocked.Or(ref _gate, DestroyedBit);
        Interlocked.And(ref _gate, ~ClosedBit);
        HandToPoolOnceDestroyed();
    }

    /// <summary>
    /// Gives jemalloc's arena up, after <see cref="MarkDestroyed"/> or before it, with nothing in flight,
    /// its thread caches flushed and its quarantined blocks released: frees everything in it and keeps
    /// it, purged, in the <see cref="ArenaPool"/> for the next <see cref="JemArena"/> (handed over once
    /// the account is marked destroyed); or, when it cannot be kept, destroys it as <see cref="DestroyArena"/> does.
    /// </summary>
    /// <exception cref="MallctlException">The arena had to be destroyed and jemalloc refused (a thread has it as its <c>thread.arena</c>); the arena remains, and is recorded so.</exception>
    internal void RetireArena()
    {
        if (!ArenaPool.TryReset(Index, out ArenaCounts counts))
        {
            DestroyArena();
            return;
        }

        EndCounts = counts;
        Volatile.Write(ref _keeping, 1);
        HandToPoolOnceDestroyed();
    }

    // Only once destroyed, so that a new owner never takes the index while this account still lets anything in.
    private void HandToPoolOnceDestroyed()
    {
        if (IsDestroyed && Interlocked.CompareExchange(ref _keeping, 2, 1) == 1)
        {
            ArenaPool.Add(this);
        }
    }

    /// <summary>
    /// Destroys jemalloc's arena (<c>arena.&lt;i&gt;.destroy</c>), after <see cref="MarkDestroyed"/> or
    /// before it, and records that its index is free for reuse.
    /// </summary>
    /// <exception cref="MallctlException">jemalloc refused (a thread has the arena as its <c>thread.arena</c>); the arena remains, and is recorded so.</exception>
    internal void DestroyArena()
    {
        ArenaDirectory.Forget(Index);
        try
        {
            MallctlClient.RunNative($"arena.{Index}.destroy");
        }
        catch (MallctlException)
        {
            ArenaDirectory.MarkCreated(Index);
            throw;
        }

        ArenaDirectory.MarkDestroyed(Index);
        HugePageAdvisor.ForgetArena(Index);
        _arenaGone = true;
    }

    private void ThrowDestroyed() =>
        throw new ObjectDisposedException(OwnerTypeName, $"Arena {Index} has been destroyed; nothing can be allocated or freed in it any more.");
}
