using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Memory;

namespace jemalloc.Ledger;

/// <summary>
/// One allocation recorded in the ledger, and the only way the structures above the ledger reach it:
/// every rule for when the memory may be used or freed is a member of this type.
/// </summary>
/// <remarks>
/// <para>
/// A block is its <see cref="AllocationHandle"/> and nothing else (eight bytes, copied atomically); its
/// address, size and arena live in the ledger's slot, which the handle names. Every copy of a block
/// stops being live at once, when any of them is freed or its arena reset.
/// </para>
/// <para>
/// The rules a structure follows (docs/design-notes.md#the-life-of-a-block):
/// read or write the memory only under a <see cref="Lease(string)"/> (or an <see cref="Acquire"/> the
/// structure answers for); free it with <see cref="Free"/>, or with <see cref="Retire"/> then
/// <see cref="FreeOwned"/> when a <see cref="System.Runtime.InteropServices.SafeHandle"/> owns it;
/// move it only with <see cref="Resize"/>, under the caller's one lease. Each refuses, with the
/// exception the structures document, whatever would break another holder.
/// </para>
/// </remarks>
[DebuggerDisplay("{Handle.Value,h} live={IsLive}")]
internal readonly unsafe struct LedgerBlock : IEquatable<LedgerBlock>
{
    private readonly AllocationHandle _handle;

    internal LedgerBlock(AllocationHandle handle) => _handle = handle;

    /// <summary>The block's public handle, shared by every copy.</summary>
    internal AllocationHandle Handle => _handle;

    /// <summary>Whether this is <see langword="default"/>: no block at all.</summary>
    internal bool IsDefault => _handle == default;

    /// <summary>Whether the block is still live: neither freed, retired nor invalidated by an arena reset.</summary>
    internal bool IsLive => _handle.IsValid;

    /// <summary>
    /// The address recorded for the block; meaningful only while the caller holds a lease or an
    /// acquisition (without one it may be a freed block's, which only a prefetch may name).
    /// </summary>
    internal nint Address
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => SlotTable.HotOf(_handle.Slot).Pointer;
    }

    /// <summary>The size in bytes recorded for the block; meaningful only while the caller holds a lease or an acquisition.</summary>
    internal nuint Size => SlotTable.HotOf(_handle.Slot).Size;

    /// <summary>
    /// Allocates <paramref name="size"/> bytes through the library's one allocation path and records them.
    /// </summary>
    /// <param name="size">Bytes; greater than zero.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <param name="kind">The owning structure's kind.</param>
    /// <param name="elementType">The element type's number (<see cref="ElementTypes.IdOf{T}"/>).</param>
    /// <param name="block">The new block.</param>
    /// <param name="owner">The object an arena reset tells, or null (only for memory outside any arena of a <see cref="JemArena"/>, or owned by a structure that checks the block itself).</param>
    /// <param name="keyLength">The element count a keyed check (<see cref="ContainsKeyed"/>) compares against; 0 if unused.</param>
    /// <param name="zero">False only for a caller that writes every byte before anyone can read them.</param>
    /// <param name="acquired">Whether the block starts acquired once, with no arena reset between the allocation and the acquisition.</param>
    /// <returns>The memory.</returns>
    /// <exception cref="ArgumentException">The options name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed its arena's budget.</exception>
    /// <exception cref="ObjectDisposedException">The options name a destroyed <see cref="JemArena"/>.</exception>
    internal static void* Allocate(
        nuint size, AllocationOptions options, AllocationKind kind, int elementType, out LedgerBlock block,
        IAllocationOwner? owner = null, uint keyLength = 0, bool zero = true, bool acquired = false)
    {
        void* memory = AllocationLedger.Allocate(size, options, kind, elementType, keyLength, owner, out AllocationHandle handle, zero, acquired);
        block = new LedgerBlock(handle);
        return memory;
    }

    /// <summary>
    /// A block with no memory that stands for one lease or scope, so that copies of a lease end it only
    /// once (<see cref="SpendToken"/>). A nonzero <paramref name="tag"/> names what it was taken for.
    /// </summary>
    /// <exception cref="InvalidOperationException">The ledger is full.</exception>
    internal static LedgerBlock TakeToken(int tag = 0) => new(AllocationLedger.TakeLeaseToken(tag));

    /// <summary>Spends a token from <see cref="TakeToken"/> taken with <paramref name="tag"/>; <see langword="false"/> if it was spent already or has another tag.</summary>
    internal bool SpendToken(int tag = 0) => AllocationLedger.SpendLeaseToken(_handle, tag);

    /// <summary>
    /// Opens a lease for the library's own use, ended by the scope's <see langword="using"/>: until
    /// then the block cannot be freed, retired, resized by anyone else or reset.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block is not live (the message names <paramref name="ownerName"/>).</exception>
    /// <exception cref="InvalidOperationException">It has the most leases the ledger counts.</exception>
    internal LeaseScope Lease(string ownerName)
    {
        AllocationLedger.EnterLease(_handle, ownerName);
        return new LeaseScope(_handle);
    }

    /// <summary>
    /// Opens a lease that outlives the call (ended by <see cref="EndLease"/>, exactly once): for a
    /// structure that keeps one across calls, such as a writer's outstanding span. Prefer <see cref="Lease(string)"/>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases the ledger counts.</exception>
    internal void BeginLease(string ownerName) => AllocationLedger.EnterLease(_handle, ownerName);

    /// <summary>Ends a lease opened by <see cref="BeginLease"/>; the caller guarantees it is ended once.</summary>
    internal void EndLease() => AllocationLedger.ExitLease(_handle);

    /// <summary>
    /// Opens a public <see cref="MemoryLease{T}"/> over <paramref name="length"/> elements at
    /// <paramref name="pointer"/>. With <paramref name="withToken"/> it is a user's lease, ended once
    /// through any copy; without, one of the library's operations, ended by the caller's <see langword="using"/>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases the ledger counts, or the ledger is full.</exception>
    internal MemoryLease<T> OpenLease<T>(object? owner, T* pointer, long length, string ownerName, bool withToken)
        where T : unmanaged
    {
        AllocationHandle token = EnterLease(ownerName, withToken);
        return new MemoryLease<T>(owner, pointer, length, _handle, token);
    }

    /// <summary>
    /// As <see cref="OpenLease{T}(object, T*, long, string, bool)"/> over the block's recorded address,
    /// read under the lease, and the element count it was allocated with.
    /// </summary>
    internal MemoryLease<T> OpenKeyedLease<T>(string ownerName, bool withToken)
        where T : unmanaged
    {
        AllocationHandle token = EnterLease(ownerName, withToken);
        ref HotSlot slot = ref SlotTable.HotOf(_handle.Slot);
        return new MemoryLease<T>(null, (T*)slot.Pointer, (uint)slot.Key, _handle, token);
    }

    /// <summary>A hold, kept in a field, on the memory of <paramref name="owner"/>: counted with the leases.</summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases and holds the ledger counts.</exception>
    internal MemoryHold Hold(object owner, string ownerName) => MemoryHold.Take(owner, this, ownerName);

    /// <summary>Adds one to the block's <c>Acquire()</c> count; it cannot be freed until <see cref="Release"/>.</summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It is already acquired the most times the ledger counts.</exception>
    internal void Acquire(string ownerName) => AllocationLedger.Acquire(_handle, ownerName);

    /// <summary>Takes one from the block's <c>Acquire()</c> count (never from its leases).</summary>
    /// <exception cref="ObjectDisposedException">The block is not live.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    internal void Release(string ownerName) => AllocationLedger.Release(_handle, ownerName);

    /// <summary>
    /// Ends the block for a <see cref="System.Runtime.InteropServices.SafeHandle"/> being disposed: every
    /// copy is dead at once, while the memory waits for <see cref="FreeOwned"/>.
    /// </summary>
    /// <returns><see langword="false"/> if it was no longer live.</returns>
    /// <exception cref="InvalidOperationException">It is acquired or leased.</exception>
    internal bool Retire(string ownerName) => AllocationLedger.Retire(_handle, ownerName);

    /// <summary>
    /// The owner is done with the block: frees it if retired, or if still live and neither acquired nor
    /// leased; leaves an acquired or leased one live (a leak the ledger lists) rather than free it
    /// under its holders; does nothing once an arena reset invalidated it.
    /// </summary>
    internal void FreeOwned() => AllocationLedger.FreeOwned(_handle);

    /// <summary>
    /// Frees the block: every copy is dead at once, then the memory goes back (poisoned and quarantined
    /// in checked mode).
    /// </summary>
    /// <param name="ownerName">The owner's type name, for messages.</param>
    /// <param name="ownAcquisitions">The acquisitions the caller holds itself, ended by the free; any other refuses it.</param>
    /// <exception cref="ObjectDisposedException">It is not live, or is <see langword="default"/>.</exception>
    /// <exception cref="InvalidOperationException">It is acquired (other than by the caller) or leased.</exception>
    internal void Free(string ownerName, int ownAcquisitions = 0) => AllocationLedger.Free(_handle, ownerName, ownAcquisitions);

    /// <summary>
    /// Resizes the block (in place when it can) under the caller's one lease; the old address is dead
    /// afterwards. Bytes past the old size are not cleared.
    /// </summary>
    /// <returns>The block's address, which may have changed.</returns>
    /// <exception cref="InvalidOperationException">Another lease, operation or <c>Acquire()</c> holds the memory; it is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the block is unchanged.</exception>
    /// <exception cref="ArenaBudgetExceededException">The growth would exceed the arena's budget; the block is unchanged.</exception>
    internal void* Resize(nuint newSize, string ownerName, bool hugePages = false, int ownAcquisitions = 0) =>
        AllocationLedger.Reallocate(_handle, newSize, ownerName, hugePages, ownAcquisitions);

    /// <summary>
    /// Records that the live block now belongs to <paramref name="owner"/>, a structure of
    /// <paramref name="kind"/> (memory handed over without a copy), which an arena reset then tells.
    /// </summary>
    /// <returns><see langword="false"/> if an arena reset invalidated the block already.</returns>
    internal bool Adopt(AllocationKind kind, IAllocationOwner owner) => AllocationLedger.Adopt(_handle, kind, owner);

    /// <summary>Throws <see cref="ObjectDisposedException"/> naming <paramref name="ownerName"/> unless the block is live.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfNotLive(string ownerName) => AllocationLedger.ThrowIfInvalid(_handle, ownerName);

    /// <summary>Throws <see cref="ObjectDisposedException"/> naming <paramref name="owner"/>'s type unless the block is live.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfFreed(object owner)
    {
        if (!_handle.IsValid)
        {
            ThrowHelper.ThrowFreed(owner);
        }
    }

    /// <summary>
    /// The failure of an indexer: <see cref="ObjectDisposedException"/> if the block is not live (its
    /// length no longer means anything), otherwise <see cref="IndexOutOfRangeException"/>. Its body is
    /// only a throw, so the JIT treats a call to it as never returning and keeps it out of loops.
    /// </summary>
    [DoesNotReturn]
    internal void ThrowIndexFailure(long index, long length, string typeName) =>
        throw LedgerErrors.IndexFailure(index, length, _handle, typeName);

    /// <summary>
    /// The keyed check, one load and one compare: whether the block is live and <paramref name="index"/>
    /// is below the element count it was allocated with (<c>keyLength</c>). <paramref name="address"/>
    /// is the block's address, to be used only when the check passed.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool ContainsKeyed(uint index, out nint address)
    {
        ref HotSlot slot = ref SlotTable.HotOf(_handle.Slot);
        // With matching generations the check's high half is all ones and its low half the count;
        // otherwise it is below any value with the high half set.
        bool inside = (SlotState.KeyMatch | index) < SlotState.KeyCheck(SlotTable.ReadKey(ref slot), _handle.Value);
        address = slot.Pointer;
        return inside;
    }

    /// <summary>The keyed element count if the block is live, or -1 (one load): also -1 for <see langword="default"/>.</summary>
    internal long KeyedLength
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            ulong check = SlotState.KeyCheck(SlotTable.ReadKey(ref SlotTable.HotOf(_handle.Slot)), _handle.Value);
            return check < SlotState.KeyMatch ? -1 : (uint)check;
        }
    }

    /// <summary>
    /// The keyed element count of a handle that may be dead, for a failure message; 0 when it is not live.
    /// </summary>
    internal uint KeyedLengthOrZero => _handle.IsValid ? (uint)SlotTable.HotOf(_handle.Slot).Key : 0u;

    /// <summary>
    /// Invalidates every live block in <paramref name="arena"/> and tells their owners, for an arena
    /// reset (the caller holds the arena's gate closed). With <paramref name="freeEach"/>, checked
    /// mode's reset: each block is freed now, through the quarantine.
    /// </summary>
    /// <returns>The number of blocks invalidated.</returns>
    /// <exception cref="InvalidOperationException">A block in the arena is acquired or leased; nothing was invalidated.</exception>
    internal static int InvalidateArena(uint arena, bool freeEach = false) => AllocationLedger.InvalidateArena(arena, freeEach);

    // A lease, and with withToken the token that lets any copy of a user's lease end it once.
    private AllocationHandle EnterLease(string ownerName, bool withToken)
    {
        AllocationLedger.EnterLease(_handle, ownerName);
        if (!withToken)
        {
            return default;
        }

        try
        {
            return AllocationLedger.TakeLeaseToken();
        }
        catch
        {
            AllocationLedger.ExitLease(_handle);
            throw;
        }
    }

    /// <summary>
    /// Checked mode: checks and frees the quarantine's oldest blocks while it holds more than its
    /// limit. For an arena's reset or dispose that quarantined blocks without evicting, once its gate
    /// is open again (an <see cref="AllocationLedger.UseAfterFreeDetected"/> handler may allocate in the arena).
    /// </summary>
    internal static void EvictQuarantineOverLimit() => Quarantine.EvictOverLimit();

    /// <summary>
    /// Checked mode: poisons and holds back <paramref name="memory"/>, a raw allocation of an arena
    /// (memory with no block) that the arena's reset frees, without evicting (see <see cref="EvictQuarantineOverLimit"/>).
    /// </summary>
    /// <returns><see langword="false"/> if the quarantine did not take it (checked mode is off, or it is larger than the limit): the caller frees it.</returns>
    internal static bool TryQuarantineRaw(void* memory, nuint size, int flags) =>
        Quarantine.TryAdmitWithoutSlot(memory, size, flags, AllocationKind.Raw, 0, evict: false);

    /// <summary>
    /// Checks and frees every block of <paramref name="arena"/> the quarantine holds, before the
    /// arena's own reset or destruction frees all of its memory (a held block would be freed twice).
    /// The caller holds the arena's gate closed.
    /// </summary>
    internal static void ReleaseArenaFromQuarantine(uint arena) => Quarantine.ReleaseArena(arena);

    /// <summary>
    /// Runs <paramref name="destroy"/>, which must not throw, once the quarantine holds no block of
    /// <paramref name="arena"/>: now, or on the thread whose eviction or flush lets the last one go.
    /// For a checked-mode dispose, after which no block of the arena can come in.
    /// </summary>
    internal static void DestroyArenaWhenDrained(uint arena, Action destroy) => Quarantine.DestroyWhenDrained(arena, destroy);

    /// <summary>
    /// The keyed check without an index, one load as <see cref="ContainsKeyed"/>: whether the block is
    /// live, with the element count it was allocated with (<paramref name="keyLength"/>) and its
    /// address, read after the key; both are to be used only when it returns <see langword="true"/>.
    /// For a value that names a range of a block and checks the range against its length itself.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryReadKeyed(out uint keyLength, out nint address)
    {
        ref HotSlot slot = ref SlotTable.HotOf(_handle.Slot);
        ulong check = SlotState.KeyCheck(SlotTable.ReadKey(ref slot), _handle.Value);
        keyLength = (uint)check;
        address = slot.Pointer;
        return check >= SlotState.KeyMatch;
    }

    /// <inheritdoc/>
    public bool Equals(LedgerBlock other) => _handle == other._handle;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is LedgerBlock other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _handle.GetHashCode();

    /// <summary>Whether both name the same block.</summary>
    public static bool operator ==(LedgerBlock left, LedgerBlock right) => left.Equals(right);

    /// <summary>Whether they name different blocks.</summary>
    public static bool operator !=(LedgerBlock left, LedgerBlock right) => !left.Equals(right);

    /// <summary>A lease for the library's own use, ended once by its <see langword="using"/>.</summary>
    internal ref struct LeaseScope
    {
        private readonly AllocationHandle _handle;
        private bool _open;

        internal LeaseScope(AllocationHandle handle)
        {
            _handle = handle;
            _open = true;
        }

        /// <summary>The block's address, valid while the scope is open.</summary>
        internal readonly nint Address => SlotTable.HotOf(_handle.Slot).Pointer;

        /// <summary>The block's size in bytes, valid while the scope is open.</summary>
        internal readonly nuint Size => SlotTable.HotOf(_handle.Slot).Size;

        /// <summary>Ends the lease; later calls do nothing.</summary>
        public void Dispose()
        {
            if (_open)
            {
                _open = false;
                AllocationLedger.ExitLease(_handle);
            }
        }
    }
}
