using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.Arm;
using jemalloc.Internal;
using jemalloc.Interop;
using jemalloc.Mallctl;

namespace jemalloc.Ledger;

/// <summary>
/// The ledger's slots, in address space reserved once at start-up and committed as the number of
/// slots grows, so a slot never moves: its record's address is the table's base (a constant once the
/// JIT has seen this class initialized) plus the slot number times the record size. Each record is
/// one cache line: what an access checks, then what only allocation, free and diagnostics need
/// (see <see cref="SlotRecord"/>). Holds no managed references: millions of allocations cost the GC nothing.
/// </summary>
internal static unsafe class SlotTable
{
    /// <summary>The most slots the table can ever hold (a reservation of address space, not of memory).</summary>
    internal const int Capacity = 1 << 27;

    private const int CommitChunk = 1 << 16;

    private static readonly SlotRecord* Records = (SlotRecord*)VirtualMemory.Reserve((nuint)Capacity * (nuint)sizeof(SlotRecord));
    private static readonly Lock GrowLock = new();
    private static int s_committed;
    private static int s_handedOut;
    // Free slots shared by the threads' caches: a stack of slot numbers, in address space reserved
    // like the records and committed with them (there are never more free slots than slots), moved a
    // batch at a time under one short lock. Contiguous, so a batch is a copy of a few cache lines;
    // linked through the slots' own records instead, taking a batch was a chain of dependent loads of
    // lines another core had just written, which two threads paid on every refill.
    private static readonly int* Shared = (int*)VirtualMemory.Reserve((nuint)Capacity * sizeof(int));
    private static readonly Lock SharedLock = new();
    private static int s_sharedCount;

    // This thread's free slots: most creates and frees take and return a slot here, with no atomic.
    // The cache's array is kept in its own static too, so that a take or a give-back reaches the
    // slots from the thread-static base with one dependent load less; both go when the thread exits.
    [ThreadStatic]
    private static SlotCache? t_cache;

    [ThreadStatic]
    private static int[]? t_slots;

#pragma warning disable CA1810 // The first chunk must be committed before any slot is read; an initializer cannot order that after the fields.
    static SlotTable()
#pragma warning restore CA1810
    {
        CommitUpTo(1);
        // Before the first structure: an arena reset or destruction through mallctl asks the ledger from now on.
        MallctlPolicy.RegisterLedger(LedgerArenaUse.HasStructuresIn, Quarantine.ReleaseArena);
    }

    /// <summary>How many slots have ever been handed out (live, free or retired): the range diagnostics and resets scan.</summary>
    internal static int HandedOut => Math.Min(Volatile.Read(ref s_handedOut), Volatile.Read(ref s_committed));

    /// <summary>The hot record of <paramref name="slot"/>; every slot below <see cref="Capacity"/> may be addressed, committed or not, but only committed ones read.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref HotSlot HotOf(int slot) => ref Records[(uint)slot].Hot;

    /// <summary>
    /// Reads a slot's key so that the pointer read after it belongs to the same allocation: a plain
    /// load where the CPU keeps loads in order (x64), so the JIT may keep it out of loops; an
    /// acquire load on Arm64, whose loads may otherwise pass each other.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long ReadKey(ref HotSlot slot) => ArmBase.IsSupported ? Volatile.Read(ref slot.Key) : slot.Key;

    /// <summary>The cold record of <paramref name="slot"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref ColdSlot ColdOf(int slot) => ref Records[(uint)slot].Cold;

    /// <summary>A free slot: from this thread's <see cref="SlotCache"/>, which refills a batch at a time from the shared store or with new slots.</summary>
    /// <exception cref="OutOfMemoryException">The OS refused to commit more of the table.</exception>
    /// <exception cref="InvalidOperationException">The table is full.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Take()
    {
        int[]? slots = t_slots;
        if (slots is not null && SlotCache.TryPop(slots, out int slot))
        {
            return slot;
        }

        return TakeSlow();
    }

    /// <summary>Puts a slot whose state is free back in this thread's cache, or keeps it out for good once its generation is spent.</summary>
    internal static void Return(int slot)
    {
        if (SlotState.Generation(Volatile.Read(ref HotOf(slot).State)) >= SlotState.LastGeneration)
        {
            return;
        }

        int[]? slots = t_slots;
        if (slots is null || !SlotCache.TryPush(slots, slot))
        {
            ReturnSlow(slot);
        }
    }

    /// <summary>Takes up to <paramref name="destination"/>'s length of slots from the shared store, the most recently given back first; returns how many.</summary>
    internal static int TakeShared(Span<int> destination)
    {
        lock (SharedLock)
        {
            int count = Math.Min(destination.Length, s_sharedCount);
            s_sharedCount -= count;
            new ReadOnlySpan<int>(Shared + s_sharedCount, count).CopyTo(destination);
            return count;
        }
    }

    /// <summary>
    /// Hands out never-used slots, a batch with one atomic add; returns how many (fewer only at the
    /// end of the table, 0 when it is full). Called with <see cref="SlotCache.Batch"/> slots at a time,
    /// so every run starts at a multiple of it and its records fill whole pages.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The OS refused to commit more of the table.</exception>
    internal static int TakeNew(Span<int> destination)
    {
        int count = destination.Length;
        int end = Interlocked.Add(ref s_handedOut, count);
        if ((uint)end > Capacity)
        {
            // The last slots of the table: one at a time, while there are any.
            Interlocked.Add(ref s_handedOut, -count);
            count = 0;
            end = 0;
            while (count < destination.Length)
            {
                int slot = Interlocked.Increment(ref s_handedOut) - 1;
                if ((uint)slot >= Capacity)
                {
                    Interlocked.Decrement(ref s_handedOut);
                    break;
                }

                destination[count++] = slot;
                end = Math.Max(end, slot + 1);
            }
        }
        else
        {
            // Highest first, so the cache hands the lowest out first.
            for (int i = 0; i < count; i++)
            {
                destination[i] = end - 1 - i;
            }
        }

        if (count > 0 && end > Volatile.Read(ref s_committed))
        {
            CommitUpTo(end);
        }

        return count;
    }

    /// <summary>Gives free slots (a cache's batch, or an exited thread's whole cache) to the shared store.</summary>
    /// <exception cref="InvalidOperationException">More slots would be free than were ever handed out: a slot was given back twice (a ledger bug, refused rather than written past the store).</exception>
    internal static void GiveBack(ReadOnlySpan<int> slots)
    {
        lock (SharedLock)
        {
            if (s_sharedCount + slots.Length > Volatile.Read(ref s_committed))
            {
                ThrowHelper.ThrowInvalidOperation("The allocation ledger was given back more free slots than it has: a slot was freed twice.");
            }

            slots.CopyTo(new Span<int>(Shared + s_sharedCount, slots.Length));
            s_sharedCount += slots.Length;
        }
    }

    /// <summary>How many slots the shared store holds: exact only while no thread takes or gives back slots (for diagnostics and tests).</summary>
    internal static int CountShared()
    {
        lock (SharedLock)
        {
            return s_sharedCount;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int TakeSlow()
    {
        SlotCache cache = CacheOfThisThread();
        if (!cache.Refill())
        {
            ThrowHelper.ThrowInvalidOperation($"The allocation ledger is full: it records at most {Capacity:N0} live allocations and leases.");
        }

        cache.TryPop(out int slot);
        return slot;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReturnSlow(int slot)
    {
        SlotCache cache = CacheOfThisThread();
        if (!cache.TryPush(slot))
        {
            cache.Drain();
            cache.TryPush(slot);
        }
    }

    private static SlotCache CacheOfThisThread()
    {
        if (t_cache is not SlotCache cache)
        {
            cache = new SlotCache();
            t_cache = cache;
            t_slots = cache.Slots;
        }

        return cache;
    }

    private static void CommitUpTo(int slots)
    {
        lock (GrowLock)
        {
            int committed = s_committed;
            if (slots <= committed)
            {
                return;
            }

            int target = Math.Min(Capacity, (slots + CommitChunk - 1) / CommitChunk * CommitChunk);
            int count = target - committed;
            VirtualMemory.Commit(Records + committed, (nuint)count * (nuint)sizeof(SlotRecord));
            VirtualMemory.Commit(Shared + committed, (nuint)count * sizeof(int));
            Volatile.Write(ref s_committed, target);
        }
    }
}
