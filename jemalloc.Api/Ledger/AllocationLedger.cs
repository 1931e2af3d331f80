using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.ArenaBooks;
using jemalloc.Internal;
using jemalloc.Interop;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// The thread-safe record of every live allocation made by the structures (<c>FixedBuffer&lt;T&gt;</c>,
/// <c>SafeArray&lt;T&gt;</c>, <c>HugeArray&lt;T&gt;</c>, <c>FixedUtf8String</c>): size, owner,
/// acquisitions and leases. Every access through a structure is checked against it.
/// </summary>
/// <remarks>
/// <para>
/// Each allocation occupies a slot in a table of native memory that never moves. A slot's state is
/// one 64-bit word: a generation (odd while live) and the counts of acquisitions and leases. Checking
/// a handle is one load and one compare, with no lock and no allocation; freeing, acquiring, leasing
/// and releasing are single compare-and-swaps on that word, so a free can never slip past an acquire
/// or a lease on another thread. A slot is retired for good before its generation could wrap.
/// </para>
/// <para>
/// The table holds no managed references, so millions of allocations cost the garbage collector
/// nothing. Element types and stack traces are recorded only for diagnostics
/// (<see cref="CaptureStackTraces"/>).
/// </para>
/// </remarks>
public static unsafe partial class AllocationLedger
{
    // Kind of the slots that only stand for a lease (see MemoryLease<T>): no memory, never listed.
    private const AllocationKind LeaseTokenKind = (AllocationKind)(-1);

    /// <summary>
    /// Allocates <paramref name="size"/> bytes with jemalloc through the library's one allocation
    /// path and records them: zero-filled, unless <paramref name="zero"/> is false, for a caller that
    /// writes every byte before anyone can read them.
    /// </summary>
    /// <param name="size">Bytes to allocate; greater than zero.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <param name="kind">The owning structure's kind.</param>
    /// <param name="elementType">The element type's number (<see cref="ElementTypes.IdOf{T}"/>).</param>
    /// <param name="keyLength">The element count a <see cref="FixedBuffer{T}"/> indexer checks against (0 for other structures).</param>
    /// <param name="owner">The object to tell if an arena reset invalidates the memory, or null.</param>
    /// <param name="handle">The new allocation's handle.</param>
    /// <param name="zero">Whether the memory must read as zero; false only for a caller that overwrites all of it before it is published.</param>
    /// <param name="acquired">Whether the allocation starts acquired once (see <see cref="Acquire"/>), inside the arena's gate, so no arena reset can come between the allocation and the acquisition.</param>
    /// <returns>The native memory.</returns>
    /// <exception cref="ArgumentException">The options name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed its arena's budget.</exception>
    /// <exception cref="ObjectDisposedException">The options name a destroyed <see cref="JemArena"/>.</exception>
    internal static void* Allocate(nuint size, AllocationOptions options, AllocationKind kind, int elementType, uint keyLength, IAllocationOwner? owner, out AllocationHandle handle, bool zero = true, bool acquired = false)
    {
        Debug.Assert(size > 0);
        int flags = NativeAllocator.FlagsFor(size, options, out bool hugePages);

        // Inside the arena's gate from before the allocation until it is recorded, so a reset can
        // neither miss it nor free it before its owner is known.
        ArenaAccount? account = ArenaAccounts.BeginAllocation(size, ref flags, options.Account);
        void* memory = null;
        bool recorded = false;
        try
        {
            memory = NativeAllocator.Allocate(size, flags, hugePages, zero, kind, elementType);
            handle = Register(memory, size, flags, kind, elementType, keyLength, owner, acquired ? 1 : 0);
            recorded = true;
            return memory;
        }
        finally
        {
            if (!recorded && memory != null)
            {
                NativeAllocator.Free(memory, size, flags);
            }

            ArenaAccounts.EndAllocation(account, size, flags, recorded);
        }
    }

    /// <summary>
    /// Resizes a live allocation with <c>rallocx</c> (in place when it can) and records its new address
    /// and size. In an arena of a <see cref="JemArena"/> it runs inside the arena's gate (no reset can
    /// interleave) and charges the growth of its size class to the arena's budget, or refunds a
    /// shrink. The caller holds a lease, which must be the only
    /// one: no other operation, lease or <c>Acquire()</c> may be using the memory, since the block may
    /// move. While it resizes, no lease, acquire or free can begin (they wait), so none can reach
    /// the old address. The bytes past the old size are not cleared. In checked mode a block within
    /// the quarantine's limit always moves, and its old block is poisoned and quarantined as a free's
    /// is, so a span kept from before reads poison and a write through it is reported. With
    /// <paramref name="hugePages"/>, a growth to a huge page or more lands on memory advised for huge
    /// pages before it is touched.
    /// </summary>
    /// <returns>The memory's address, which may have changed.</returns>
    /// <param name="handle">The allocation.</param>
    /// <param name="newSize">Its new size in bytes.</param>
    /// <param name="ownerName">The owner's type name, for messages.</param>
    /// <param name="hugePages">Whether a growth to a huge page or more is advised for huge pages.</param>
    /// <param name="ownAcquisitions">The acquisitions the caller itself holds (it answers for the spans they keep); any other one refuses the resize.</param>
    /// <exception cref="InvalidOperationException">Another lease, operation or <c>Acquire()</c> holds the memory; it is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the allocation is unchanged.</exception>
    /// <exception cref="ArenaBudgetExceededException">The growth would exceed the arena's budget; the allocation is unchanged.</exception>
    internal static void* Reallocate(AllocationHandle handle, nuint newSize, string ownerName, bool hugePages = false, int ownAcquisitions = 0)
    {
        Debug.Assert(newSize > 0);
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        int flags = SlotTable.ColdOf(handle.Slot).Flags;
        ArenaAccount? account = ArenaAccounts.BeginFree(flags);
        // The arena's books count size classes, as an allocation and a free do: a growth is charged
        // before (and refunded if it fails), a shrink refunded after.
        long charged = 0;
        bool resized = false;
        try
        {
            if (account is not null)
            {
                long change = (long)JemNative.Nallocx(newSize, flags) - (long)JemNative.Nallocx(hot.Size, flags);
                if (change > 0)
                {
                    account.Charge(change);
                }

                charged = change;
            }

            void* moved = ReallocateSlot(handle, newSize, ownerName, hugePages, ownAcquisitions);
            resized = true;
            return moved;
        }
        finally
        {
            if (account is not null)
            {
                if (resized ? charged < 0 : charged > 0)
                {
                    account.Refund(resized ? -charged : charged);
                }

                account.Exit();
            }
        }
    }

    private static void* ReallocateSlot(AllocationHandle handle, nuint newSize, string ownerName, bool hugePages, int ownAcquisitions)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        ref ColdSlot cold = ref SlotTable.ColdOf(handle.Slot);
        long state;
        while (true)
        {
            state = ReadLiveState(handle, ref hot, ownerName);
            if (SlotState.Leases(state) != 1 || SlotState.Acquisitions(state) != ownAcquisitions)
            {
                LedgerErrors.ThrowInUse(ownerName, "resized", state - SlotState.OneLease - ownAcquisitions);
            }

            // The resetting mark makes every other lease, acquire and free wait until the block has
            // its new address; no arena reset runs meanwhile (the caller is inside the arena's gate).
            if (Interlocked.CompareExchange(ref hot.State, state | SlotState.Resetting, state) == state)
            {
                break;
            }
        }

        try
        {
            void* old = (void*)hot.Pointer;
            nuint oldSize = hot.Size;
            void* moved = Quarantine.Enabled && oldSize <= (ulong)Quarantine.Limit
                ? MoveQuarantiningOld(old, oldSize, newSize, cold.Flags, cold.Kind, cold.ElementType)
                : NativeAllocator.Reallocate(old, oldSize, newSize, ref cold.Flags, hugePages, cold.Kind, cold.ElementType);
            hot.Pointer = (nint)moved;
            hot.Size = newSize;
            return moved;
        }
        finally
        {
            // Only this thread changes the state while the mark is set.
            Volatile.Write(ref hot.State, state);
        }
    }

    /// <summary>
    /// Checked mode's resize: a new block, a copy, and the old block poisoned and quarantined as a
    /// free would leave it (rallocx would give it back to jemalloc unpoisoned when it moves).
    /// </summary>
    private static void* MoveQuarantiningOld(void* old, nuint oldSize, nuint newSize, int flags, AllocationKind kind, int elementType)
    {
        void* moved = NativeAllocator.Allocate(newSize, flags, hugePages: false, zero: false, kind, elementType);
        Buffer.MemoryCopy(old, moved, newSize, Math.Min(oldSize, newSize));
        if (!Quarantine.TryAdmitWithoutSlot(old, oldSize, flags, kind, elementType))
        {
            NativeAllocator.Free(old, oldSize, flags);
        }

        return moved;
    }

    /// <summary>
    /// Frees an allocation: invalidates every copy of its handle, then gives the memory back (or, in
    /// checked mode, poisons and quarantines it).
    /// </summary>
    /// <param name="handle">The allocation.</param>
    /// <param name="ownerName">The owner's type name, for messages.</param>
    /// <param name="ownAcquisitions">The acquisitions the caller itself holds, ended by the free; any other one refuses it.</param>
    /// <exception cref="ObjectDisposedException">It was already freed, or is <see langword="default"/>.</exception>
    /// <exception cref="InvalidOperationException">It is acquired (other than by the caller) or leased.</exception>
    internal static void Free(AllocationHandle handle, string ownerName, int ownAcquisitions = 0)
    {
        if ((handle.Generation & 1) == 0)
        {
            LedgerErrors.ThrowObjectDisposed(ownerName, handle);
        }

        // The gate of the arena the slot's memory is in, entered before the slot is invalidated so a
        // reset cannot interleave. A stale handle may name a slot reused in another arena: entering
        // that gate is harmless, and the invalidation below then fails.
        int flags = SlotTable.ColdOf(handle.Slot).Flags;
        ArenaAccount? account = ArenaAccounts.BeginFree(flags);
        nuint freed = 0;
        try
        {
            Invalidate(handle, ownerName, ownAcquisitions);
            freed = ReleaseMemory(handle.Slot, out flags);
        }
        finally
        {
            ArenaAccounts.EndFree(account, freed, flags);
        }
    }

    /// <summary>
    /// Retires an allocation owned by a <see cref="SafeHandle"/> that is being disposed: every copy of
    /// its handle becomes invalid at once, while the memory and the slot wait for <see cref="FreeOwned"/>,
    /// which the handle's <c>ReleaseHandle</c> calls when no native call holds it any more.
    /// </summary>
    /// <returns><see langword="false"/> if it was no longer live (already retired, or invalidated by an arena reset).</returns>
    /// <exception cref="InvalidOperationException">It is acquired or leased.</exception>
    internal static bool Retire(AllocationHandle handle, string ownerName)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref hot.State);
            if (SlotState.Generation(state) != handle.Generation)
            {
                return false;
            }

            if ((state & SlotState.Resetting) != 0)
            {
                // An arena reset is deciding about this slot; it either invalidates it or lets it be.
                spin.SpinOnce();
                continue;
            }

            if ((state & SlotState.CountMask) != 0)
            {
                LedgerErrors.ThrowInUse(ownerName, "disposed", state);
            }

            long retired = SlotState.Make(handle.Generation + 1, SlotState.PendingFree);
            if (Interlocked.CompareExchange(ref hot.State, retired, state) == state)
            {
                Volatile.Write(ref hot.Key, SlotState.MakeKey(handle.Generation + 1));
                return true;
            }
        }
    }

    /// <summary>
    /// The end of an allocation whose owner is done with it: a <see cref="SafeHandle"/>'s
    /// <c>ReleaseHandle</c>, or a memory pool giving up a block. Frees the memory if the handle retired
    /// it, or if it is still live (the finalizer ran, or the pool lets it go) and neither acquired nor
    /// leased; does nothing if an arena reset already invalidated it. An acquired or leased
    /// allocation is left live, a leak the ledger shows (<see cref="Snapshot"/> lists it with its
    /// acquire count), rather than freed under the pointer an <c>Acquire()</c> promised to keep or
    /// a lease's spans, which may outlive the structure's last reference.
    /// </summary>
    internal static void FreeOwned(AllocationHandle handle)
    {
        if ((handle.Generation & 1) == 0)
        {
            return;
        }

        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        long pending = SlotState.Make(handle.Generation + 1, SlotState.PendingFree);
        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref hot.State);
            if (state == pending)
            {
                break;
            }

            if (SlotState.Generation(state) != handle.Generation)
            {
                return;
            }

            if ((state & SlotState.Resetting) != 0)
            {
                spin.SpinOnce();
                continue;
            }

            if ((state & SlotState.CountMask) != 0)
            {
                return;
            }

            if (Interlocked.CompareExchange(ref hot.State, pending, state) == state)
            {
                Volatile.Write(ref hot.Key, SlotState.MakeKey(handle.Generation + 1));
                break;
            }
        }

        // A pending free may run while a reset holds the arena's gate closed: the reset waits for it.
        int flags = SlotTable.ColdOf(handle.Slot).Flags;
        ArenaAccount? account = ArenaAccounts.BeginPendingFree(flags);
        nuint freed = 0;
        try
        {
            freed = ReleaseMemory(handle.Slot, out flags);
        }
        finally
        {
            ArenaAccounts.EndFree(account, freed, flags);
        }
    }

    /// <summary>Adds one to the allocation's <c>Acquire()</c> count; it cannot be freed until released.</summary>
    /// <exception cref="ObjectDisposedException">It was freed.</exception>
    /// <exception cref="InvalidOperationException">It is already acquired the most times a slot can count.</exception>
    internal static void Acquire(AllocationHandle handle, string ownerName) => AddCount(handle, ownerName, 1);

    /// <summary>Takes one from the allocation's <c>Acquire()</c> count (never from its leases).</summary>
    /// <exception cref="ObjectDisposedException">It was freed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    internal static void Release(AllocationHandle handle, string ownerName)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        while (true)
        {
            long state = ReadLiveState(handle, ref hot, ownerName);
            if (SlotState.Acquisitions(state) == 0)
            {
                ThrowHelper.ThrowInvalidOperation($"This {ownerName} was released more times than it was acquired.");
            }

            if (Interlocked.CompareExchange(ref hot.State, state - 1, state) == state)
            {
                return;
            }
        }
    }

    /// <summary>Opens a lease on the allocation: until <see cref="ExitLease"/>, it cannot be freed, disposed or reset.</summary>
    /// <exception cref="ObjectDisposedException">It was freed.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases a slot can count.</exception>
    internal static void EnterLease(AllocationHandle handle, string ownerName) => AddCount(handle, ownerName, SlotState.OneLease);

    /// <summary>Closes a lease opened by <see cref="EnterLease"/> (once per lease: the caller guarantees it).</summary>
    internal static void ExitLease(AllocationHandle handle) =>
        Interlocked.Add(ref SlotTable.HotOf(handle.Slot).State, -SlotState.OneLease);

    /// <summary>
    /// A token that stands for one lease, so that copies of a lease release it only once. A nonzero
    /// <paramref name="tag"/> names the structure it was taken for (kept in the slot's element-type
    /// field, which tokens do not use): a struct holding a structure and a token, torn by a racy copy,
    /// then cannot spend another structure's token.
    /// </summary>
    /// <exception cref="InvalidOperationException">The ledger is full.</exception>
    internal static AllocationHandle TakeLeaseToken(int tag = 0) => Register(null, 0, 0, LeaseTokenKind, tag, 0, null);

    /// <summary>Spends a token from <see cref="TakeLeaseToken"/> taken with <paramref name="tag"/>; <see langword="false"/> if it was spent already or has another tag.</summary>
    internal static bool SpendLeaseToken(AllocationHandle token, int tag = 0)
    {
        ref HotSlot hot = ref SlotTable.HotOf(token.Slot);
        long live = SlotState.Make(token.Generation);
        // Read before the exchange below, which fails if the slot changed hands since the token was taken.
        if (Volatile.Read(ref SlotTable.ColdOf(token.Slot).ElementType) != tag)
        {
            return false;
        }

        if (Interlocked.CompareExchange(ref hot.State, SlotState.Make(token.Generation + 1), live) != live)
        {
            return false;
        }

        Volatile.Write(ref hot.Key, SlotState.MakeKey(token.Generation + 1));
        SlotTable.Return(token.Slot);
        return true;
    }

    /// <summary>
    /// Records that a live allocation now belongs to <paramref name="owner"/>, a structure of
    /// <paramref name="kind"/> (a block handed over without a copy), which an arena reset then tells.
    /// Inside the arena's gate, so no reset can slip in between the check and the record.
    /// </summary>
    /// <returns><see langword="false"/> if an arena reset invalidated the allocation already.</returns>
    internal static bool Adopt(AllocationHandle handle, AllocationKind kind, IAllocationOwner owner)
    {
        ref ColdSlot cold = ref SlotTable.ColdOf(handle.Slot);
        int flags = cold.Flags;
        ArenaAccount? account = ArenaAccounts.BeginFree(flags);
        try
        {
            if (!handle.IsValid)
            {
                return false;
            }

            cold.Kind = kind;
            if ((uint)flags >> MallocxFlags.ArenaShift != 0)
            {
                ForgetOwner(ref cold);
                cold.Owner = GCHandle.ToIntPtr(GCHandle.Alloc(owner, GCHandleType.Weak));
            }

            return true;
        }
        finally
        {
            ArenaAccounts.EndFree(account, 0, flags);
        }
    }

    /// <summary>Throws <see cref="ObjectDisposedException"/> if the allocation is gone.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ThrowIfInvalid(AllocationHandle handle, string ownerName)
    {
        if (!handle.IsValid)
        {
            LedgerErrors.ThrowObjectDisposed(ownerName, handle);
        }
    }

    /// <summary>The address and size recorded for a handle that is known to be live (e.g. leased).</summary>
    internal static (nint Address, nuint Size) Describe(AllocationHandle handle)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        return (hot.Pointer, hot.Size);
    }

    private static void AddCount(AllocationHandle handle, string ownerName, long one)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        long mask = one == 1 ? SlotState.AcquireMask : SlotState.LeaseMask;
        while (true)
        {
            long state = ReadLiveState(handle, ref hot, ownerName);
            if ((state & mask) == mask)
            {
                ThrowHelper.ThrowInvalidOperation(
                    $"This {ownerName} is already {(one == 1 ? "acquired" : "leased")} {SlotState.MaxCount} times, the most the ledger counts.");
            }

            if (Interlocked.CompareExchange(ref hot.State, state + one, state) == state)
            {
                return;
            }
        }
    }

    // The slot's state while it is live under this handle; waits out an arena reset's decision.
    private static long ReadLiveState(AllocationHandle handle, ref HotSlot hot, string ownerName)
    {
        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref hot.State);
            if ((handle.Generation & 1) == 0 || SlotState.Generation(state) != handle.Generation)
            {
                LedgerErrors.ThrowObjectDisposed(ownerName, handle);
            }

            if ((state & SlotState.Resetting) == 0)
            {
                return state;
            }

            spin.SpinOnce();
        }
    }

    private static AllocationHandle Register(void* memory, nuint size, int flags, AllocationKind kind, int elementType, uint keyLength, IAllocationOwner? owner, long acquisitions = 0)
    {
        int slot = SlotTable.Take();
        ref HotSlot hot = ref SlotTable.HotOf(slot);
        ref ColdSlot cold = ref SlotTable.ColdOf(slot);
        uint generation = SlotState.Generation(hot.State) + 1; // even (free) -> odd (live)
        hot.Size = size;
        cold.Flags = flags;
        cold.Kind = kind;
        cold.ElementType = elementType;
        cold.Owner = owner is null ? 0 : GCHandle.ToIntPtr(GCHandle.Alloc(owner, GCHandleType.Weak));
        if (kind != LeaseTokenKind)
        {
            hot.Pointer = (nint)memory;
            if (CaptureStackTraces)
            {
                RecordStackTrace(slot);
            }
        }

        Volatile.Write(ref hot.State, SlotState.Make(generation, acquisitions));
        Volatile.Write(ref hot.Key, SlotState.MakeKey(generation, keyLength));
        return new AllocationHandle(slot, generation);
    }

    private static void Invalidate(AllocationHandle handle, string ownerName, int ownAcquisitions)
    {
        ref HotSlot hot = ref SlotTable.HotOf(handle.Slot);
        long freed = SlotState.Make(handle.Generation + 1);
        while (true)
        {
            long state = ReadLiveState(handle, ref hot, ownerName);
            if ((state & SlotState.CountMask) != ownAcquisitions)
            {
                LedgerErrors.ThrowInUse(ownerName, "freed", state - ownAcquisitions);
            }

            if (Interlocked.CompareExchange(ref hot.State, freed, state) == state)
            {
                Volatile.Write(ref hot.Key, SlotState.MakeKey(handle.Generation + 1));
                return;
            }
        }
    }

    // The slot was invalidated by its one owner (free, retire): poisons and quarantines the memory in
    // checked mode, otherwise frees it; then gives the slot back. Returns the bytes freed for the
    // arena's books (0 when nothing was freed).
    private static nuint ReleaseMemory(int slot, out int flags)
    {
        ref HotSlot hot = ref SlotTable.HotOf(slot);
        ref ColdSlot cold = ref SlotTable.ColdOf(slot);
        flags = cold.Flags;
        nuint size = hot.Size;
        void* memory = (void*)hot.Pointer;
        ForgetOwner(ref cold);
        ForgetStackTrace(slot);

        bool quarantined = Quarantine.TryAdmit(slot, memory, size, flags);
        if (!quarantined)
        {
            NativeAllocator.Free(memory, size, flags);
        }

        // Only now does a pending-free mark go: an arena reset waits for it, so that the reset and
        // this free never both free the block.
        Volatile.Write(ref hot.State, SlotState.Make(SlotState.Generation(Volatile.Read(ref hot.State))));
        if (!quarantined)
        {
            SlotTable.Return(slot);
        }

        return size;
    }

    private static void ForgetOwner(ref ColdSlot cold)
    {
        if (cold.Owner != 0)
        {
            GCHandle.FromIntPtr(cold.Owner).Free();
            cold.Owner = 0;
        }
    }
}
