using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Arenas;
using jemalloc.Interop;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// The thread-safe record of every live allocation made by the high-level types, with its size,
/// owner and reference count. Every access through a <c>FixedBuffer&lt;T&gt;</c>,
/// <c>SafeArray&lt;T&gt;</c>, <c>HugeArray&lt;T&gt;</c> or <c>FixedUtf8String</c> first checks
/// its <see cref="AllocationHandle"/> here.
/// </summary>
/// <remarks>
/// <para>
/// Each allocation occupies a slot. A slot's state is one 64-bit word in pinned memory: the high
/// half is a generation (odd while the slot is live), the low half the number of outstanding
/// <c>Acquire()</c> calls. Checking a handle is a single load and compare, with no lock and no
/// allocation; freeing, acquiring and releasing are single compare-and-swaps on that word, so a
/// free can never slip past an acquire on another thread. Free slots are kept on a lock-free stack.
/// </para>
/// <para>
/// A slot's generation is 32 bits wide: a handle kept after its allocation was freed could only be
/// mistaken for a new one after the same slot has been reused two billion times.
/// </para>
/// </remarks>
public static unsafe class AllocationLedger
{
    private const int ChunkShift = 12;
    private const int ChunkSize = 1 << ChunkShift;
    private const int ChunkMask = ChunkSize - 1;
    private const uint NoArena = uint.MaxValue;
    // The acquire count of a live slot whose arena is being reset: no acquire or free may start.
    private const long ResettingCount = 0x80000000L;
    // The count half of a retired slot (generation even) whose memory is still waiting for
    // FreeRetired: a SafeHandle closed while a native call still held it.
    private const long PendingFreeCount = 0x40000000L;
    // MALLOCX_ZERO.
    private const int ZeroFlag = 0x40;

    private struct Entry
    {
        public nint Address;
        public nuint Size;
        public int Flags;
        public uint Arena;
        public AllocationKind Kind;
        public int NextFree;
        public Type? ElementType;
        public StackTrace? AllocatedAt;
        public WeakReference<IAllocationOwner>? Owner;
    }

    // Chunks are never moved or freed, so a state pointer stays valid for the life of the process;
    // growing only replaces these outer arrays with longer copies.
    private static long[][] s_states = [];
    private static Entry[][] s_entries = [];
    private static int s_slotsHandedOut;
    // Free-slot stack: low 32 bits = slot + 1 (0 = empty), high 32 bits = a tag against ABA.
    private static long s_freeHead;
    private static readonly Lock GrowLock = new();

    /// <summary>
    /// When <see langword="true"/>, each new allocation records the stack trace that made it, shown by
    /// <see cref="Snapshot"/>. Off by default: it costs far more than the allocation itself.
    /// </summary>
    public static bool CaptureStackTraces { get; set; }

    /// <summary>The number of live allocations.</summary>
    public static long LiveCount
    {
        get
        {
            long count = 0;
            ForEachLive((ref readonly Entry _, long _) => count++);
            return count;
        }
    }

    /// <summary>The total requested bytes of the live allocations.</summary>
    public static long LiveBytes
    {
        get
        {
            long bytes = 0;
            ForEachLive((ref readonly Entry e, long _) => bytes += (long)e.Size);
            return bytes;
        }
    }

    /// <summary>Lists the live allocations, e.g. to find a leak. A moment's picture: allocations come and go while it is taken.</summary>
    public static IReadOnlyList<AllocationInfo> Snapshot()
    {
        var list = new List<AllocationInfo>();
        ForEachLive((ref readonly Entry e, long state) => list.Add(new AllocationInfo(
            e.Address, e.Size, e.Kind, e.ElementType, e.Arena == NoArena ? null : e.Arena, Math.Max((int)state, 0), e.AllocatedAt?.ToString())));
        return list;
    }

    /// <summary>The size and alignment of a transparent huge page on x64 Linux.</summary>
    internal const int HugePageShift = 21;

    /// <summary>
    /// Allocates <paramref name="size"/> bytes with jemalloc and records them.
    /// </summary>
    /// <param name="size">Bytes to allocate; must be greater than zero.</param>
    /// <param name="options">Flags for <c>mallocx</c> (alignment, zero, tcache, arena), kept to free the memory with the same ones, and the huge-page request.</param>
    /// <param name="kind">The owning structure's type.</param>
    /// <param name="elementType">The owning structure's element type.</param>
    /// <param name="handle">The new allocation's handle.</param>
    /// <returns>The native memory.</returns>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    internal static void* Allocate(nuint size, AllocationOptions options, AllocationKind kind, Type? elementType, out AllocationHandle handle)
    {
        Debug.Assert(size > 0);
        int flags = options.Flags.Value;
        bool hugePages = options.HugePages && size >= (1u << HugePageShift);
        if (hugePages && (flags & 0x3F) < HugePageShift)
        {
            flags = (flags & ~0x3F) | HugePageShift;
        }

        // A JemArena's arena: counted against its budget, kept out of thread caches, never racing its reset.
        ArenaAccount? account = ArenaAccounts.BeginAllocation(size, ref flags);
        bool allocated = false;

        // Zero-filling is done here, not with MALLOCX_ZERO: jemalloc zeroes a reused large block by
        // purging its pages, so every page faults again on first touch (measured: ~195,000 faults and
        // ~300 ms for each new 800 MB array), while clearing pages it kept costs one memset (~35 ms).
        // Small blocks also get je_malloc's fast path, and je_sdallocx its fast path (flags == 0).
        bool zero = (flags & ZeroFlag) != 0;
        flags &= ~ZeroFlag;
        void* memory = null;
        try
        {
            memory = flags == 0 ? JemNative.Malloc(size) : JemNative.Mallocx(size, flags);
            if (memory == null)
            {
                ThrowHelper.ThrowOutOfMemory(size);
            }

            if (hugePages && OperatingSystem.IsLinux())
            {
                // Advice only: a kernel with THP off or unavailable refuses it and the memory is used as
                // it is. Given before the clear, so that the clear's first touch of fresh memory already
                // faults in huge pages. Pages jemalloc kept from an earlier 4 KiB-backed block stay as they
                // are (the kernel may collapse them later): dropping them to force huge pages measured
                // slower (87 ms against 51 ms to re-create and fill 100M UInt64).
                nuint advised = size & ~(((nuint)1 << HugePageShift) - 1);
                _ = Libc.Madvise((nint)memory, advised, Libc.MadvHugePage);
            }

            if (zero)
            {
                NativeMemory.Clear(memory, size);
            }

            handle = Register(memory, size, flags, kind, elementType);
            allocated = true;
            return memory;
        }
        finally
        {
            if (!allocated && memory != null)
            {
                // Recording it failed (the ledger could not grow): the memory must not leak.
                JemNative.Sdallocx(memory, size, flags);
            }

            ArenaAccounts.EndAllocation(account, size, flags, allocated);
        }
    }

    /// <summary>
    /// Frees an allocation made by <see cref="Allocate"/>: invalidates every copy of its handle, then
    /// returns the memory to jemalloc with the flags it was allocated with.
    /// </summary>
    /// <exception cref="ObjectDisposedException">It was already freed.</exception>
    /// <exception cref="InvalidOperationException">It is still acquired.</exception>
    internal static void Free(in AllocationHandle handle, string ownerName)
    {
        ArenaAccount? account = handle.State == null ? null : ArenaAccounts.BeginFree(EntryOf(handle.Slot).Arena);
        nuint size = 0;
        int flags = 0;
        try
        {
            Invalidate(handle, ownerName);
            ref Entry entry = ref EntryOf(handle.Slot);
            void* address = (void*)entry.Address;
            size = entry.Size;
            flags = entry.Flags;
            ReleaseSlot(handle.Slot, ref entry);
            JemNative.Sdallocx(address, size, flags);
        }
        finally
        {
            ArenaAccounts.EndFree(account, size, flags);
        }
    }

    /// <summary>
    /// Retires an allocation owned by a <see cref="System.Runtime.InteropServices.SafeHandle"/>:
    /// invalidates every copy of its handle at once but keeps the memory and the slot until
    /// <see cref="FreeRetired"/>, which the handle's <c>ReleaseHandle</c> calls when no native call
    /// holds it any more.
    /// </summary>
    /// <param name="handle">The allocation.</param>
    /// <param name="ownerName">The owner's type name for messages.</param>
    /// <param name="force">Retire even if acquired (the finalizer: nobody can release it any more).</param>
    /// <returns><see langword="false"/> if it was no longer live (already retired, or invalidated by an arena reset).</returns>
    /// <exception cref="InvalidOperationException">It is acquired and <paramref name="force"/> is false.</exception>
    internal static bool Retire(in AllocationHandle handle, string ownerName, bool force)
    {
        if (handle.State == null)
        {
            return false;
        }

        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref *handle.State);
            if (Generation(state) != handle.Generation)
            {
                return false;
            }

            if ((int)state < 0)
            {
                // An arena reset is deciding about this slot right now; it either frees it or gives it back.
                spin.SpinOnce();
                continue;
            }

            if ((int)state != 0 && !force)
            {
                ThrowHelper.ThrowInvalidOperation(
                    $"This {ownerName} cannot be disposed: it is still acquired {(int)state} time(s). Call Release() for each Acquire() first.");
            }

            long retired = (long)((ulong)(handle.Generation + 1) << 32) | PendingFreeCount;
            if (Interlocked.CompareExchange(ref *handle.State, retired, state) == state)
            {
                return true;
            }
        }
    }

    /// <summary>Frees the memory of an allocation retired by <see cref="Retire"/> and gives its slot back.</summary>
    internal static void FreeRetired(in AllocationHandle handle)
    {
        ArenaAccount? account = ArenaAccounts.BeginFree(EntryOf(handle.Slot).Arena);
        nuint size = 0;
        int flags = 0;
        try
        {
            FreeRetiredCore(handle, out size, out flags);
        }
        finally
        {
            ArenaAccounts.EndFree(account, size, flags);
        }
    }

    private static void FreeRetiredCore(in AllocationHandle handle, out nuint size, out int flags)
    {
        Debug.Assert(Volatile.Read(ref *handle.State) == ((long)((ulong)(handle.Generation + 1) << 32) | PendingFreeCount));
        ref Entry entry = ref EntryOf(handle.Slot);
        void* address = (void*)entry.Address;
        size = entry.Size;
        flags = entry.Flags;
        Volatile.Write(ref *handle.State, (long)((ulong)(handle.Generation + 1) << 32));
        ReleaseSlot(handle.Slot, ref entry);
        JemNative.Sdallocx(address, size, flags);
    }

    /// <summary>
    /// The end of an allocation owned by a <see cref="System.Runtime.InteropServices.SafeHandle"/>, from its
    /// <c>ReleaseHandle</c>: frees the memory if the handle retired it or it is still live (the
    /// finalizer), and does nothing if an arena reset already invalidated and freed it.
    /// </summary>
    internal static void FreeOwned(in AllocationHandle handle, string ownerName)
    {
        if (handle.State == null)
        {
            return;
        }

        ArenaAccount? account = ArenaAccounts.BeginFree(EntryOf(handle.Slot).Arena);
        nuint size = 0;
        int flags = 0;
        try
        {
            _ = Retire(handle, ownerName, force: true);
            long pending = (long)((ulong)(handle.Generation + 1) << 32) | PendingFreeCount;
            if (Volatile.Read(ref *handle.State) == pending)
            {
                FreeRetiredCore(handle, out size, out flags);
            }
        }
        finally
        {
            ArenaAccounts.EndFree(account, size, flags);
        }
    }

    /// <summary>
    /// Records the object that owns a live allocation, so that <see cref="InvalidateArena"/> can tell
    /// it (weakly referenced: a leaked owner is still finalized). If the allocation was invalidated
    /// before this call, the owner is told at once.
    /// </summary>
    internal static void AttachOwner(in AllocationHandle handle, IAllocationOwner owner)
    {
        EntryOf(handle.Slot).Owner = new WeakReference<IAllocationOwner>(owner);
        if (!handle.IsValid)
        {
            owner.OnInvalidated();
        }
    }

    /// <summary>Checks a handle, throwing <see cref="ObjectDisposedException"/> if its allocation is gone.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ThrowIfInvalid(in AllocationHandle handle, string ownerName)
    {
        if (!handle.IsValid)
        {
            ThrowHelper.ThrowObjectDisposed(ownerName);
        }
    }

    /// <summary>Adds one to the allocation's reference count; it cannot be freed until released.</summary>
    /// <exception cref="ObjectDisposedException">It was freed.</exception>
    internal static void Acquire(in AllocationHandle handle, string ownerName)
    {
        if (handle.State == null)
        {
            ThrowHelper.ThrowObjectDisposed(ownerName);
        }

        while (true)
        {
            long state = Volatile.Read(ref *handle.State);
            if (Generation(state) != handle.Generation || (int)state < 0)
            {
                ThrowHelper.ThrowObjectDisposed(ownerName);
            }

            if ((int)state == int.MaxValue)
            {
                ThrowHelper.ThrowInvalidOperation($"This {ownerName} has been acquired {int.MaxValue} times without release.");
            }

            if (Interlocked.CompareExchange(ref *handle.State, state + 1, state) == state)
            {
                return;
            }
        }
    }

    /// <summary>Takes one from the allocation's reference count.</summary>
    /// <exception cref="ObjectDisposedException">It was freed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    internal static void Release(in AllocationHandle handle, string ownerName)
    {
        if (handle.State == null)
        {
            ThrowHelper.ThrowObjectDisposed(ownerName);
        }

        while (true)
        {
            long state = Volatile.Read(ref *handle.State);
            if (Generation(state) != handle.Generation || (int)state < 0)
            {
                ThrowHelper.ThrowObjectDisposed(ownerName);
            }

            if ((int)state == 0)
            {
                ThrowHelper.ThrowInvalidOperation($"This {ownerName} was released more times than it was acquired.");
            }

            if (Interlocked.CompareExchange(ref *handle.State, state - 1, state) == state)
            {
                return;
            }
        }
    }

    /// <summary>The address and size recorded for a live handle.</summary>
    internal static (nint Address, nuint Size) Describe(in AllocationHandle handle)
    {
        ref Entry entry = ref EntryOf(handle.Slot);
        return (entry.Address, entry.Size);
    }

    /// <summary>
    /// Invalidates every live allocation recorded in <paramref name="arena"/> without freeing its memory
    /// (the arena's reset or destruction frees it all at once), and tells the owning arrays (see
    /// <see cref="AttachOwner"/>). Fails, invalidating nothing, if any of them is acquired, or was
    /// disposed while a native call still holds it. Calls for the same arena must not overlap (a
    /// <see cref="JemArena"/> runs its resets one at a time).
    /// </summary>
    /// <returns>The number of allocations invalidated.</returns>
    /// <exception cref="InvalidOperationException">An allocation in the arena is acquired.</exception>
    internal static int InvalidateArena(uint arena)
    {
        // First pass: lock each live slot of the arena against acquisition and freeing by setting the
        // negative sentinel in its count; if one is acquired, undo and fail. The sentinel itself marks
        // the slots locked, so no list is needed (a reset of many small structures allocates nothing).
        int slots = Volatile.Read(ref s_slotsHandedOut);
        for (int slot = 0; slot < slots; slot++)
        {
            long* statePtr = StateOf(slot);
            while (true)
            {
                long state = Volatile.Read(ref *statePtr);
                ref Entry entry = ref EntryOf(slot);
                if (entry.Arena != arena)
                {
                    break;
                }

                if ((Generation(state) & 1) == 0)
                {
                    if (state == ((long)((ulong)Generation(state) << 32) | PendingFreeCount))
                    {
                        Unlock(arena, slot);
                        ThrowHelper.ThrowInvalidOperation(
                            $"An allocation of {entry.Size} bytes ({entry.Kind}) in arena {arena} was disposed but a native call still uses it; wait for the call to return before resetting or destroying the arena.");
                    }

                    break;
                }

                if ((int)state != 0)
                {
                    Unlock(arena, slot);
                    ThrowHelper.ThrowInvalidOperation(
                        $"An allocation of {entry.Size} bytes ({entry.Kind}) in arena {arena} is still acquired; release it before resetting or destroying the arena.");
                }

                if (Interlocked.CompareExchange(ref *statePtr, state | ResettingCount, state) == state)
                {
                    break;
                }
            }
        }

        int invalidated = 0;
        for (int slot = 0; slot < slots; slot++)
        {
            long state = Volatile.Read(ref *StateOf(slot));
            ref Entry entry = ref EntryOf(slot);
            if (entry.Arena != arena || (Generation(state) & 1) == 0 || (int)state >= 0)
            {
                continue;
            }

            Volatile.Write(ref *StateOf(slot), (long)((ulong)(Generation(state) + 1) << 32));
            if (entry.Owner is not null && entry.Owner.TryGetTarget(out IAllocationOwner? owner))
            {
                owner.OnInvalidated();
            }

            ReleaseSlot(slot, ref entry);
            invalidated++;
        }

        return invalidated;
    }

    // Undoes the first pass of InvalidateArena up to (not including) the slot that failed: a locked
    // slot had a count of zero, so clearing the sentinel restores it exactly.
    private static void Unlock(uint arena, int failedSlot)
    {
        for (int slot = 0; slot < failedSlot; slot++)
        {
            long* statePtr = StateOf(slot);
            long state = Volatile.Read(ref *statePtr);
            if (EntryOf(slot).Arena == arena && (Generation(state) & 1) == 1 && (int)state < 0)
            {
                Volatile.Write(ref *statePtr, state & ~ResettingCount);
            }
        }
    }

    private static AllocationHandle Register(void* memory, nuint size, int flags, AllocationKind kind, Type? elementType)
    {
        int slot = TakeSlot();
        ref Entry entry = ref EntryOf(slot);
        entry.Address = (nint)memory;
        entry.Size = size;
        entry.Flags = flags;
        // MALLOCX_ARENA(a) is (a + 1) << 20: an allocation made in an explicit arena remembers it.
        entry.Arena = (flags >>> 20) is var arenaPlusOne and not 0 ? (uint)arenaPlusOne - 1 : NoArena;
        entry.Kind = kind;
        entry.ElementType = elementType;
        entry.AllocatedAt = CaptureStackTraces ? new StackTrace(2, fNeedFileInfo: true) : null;

        long* state = StateOf(slot);
        uint generation = Generation(*state) + 1; // even (free) -> odd (live)
        Volatile.Write(ref *state, (long)((ulong)generation << 32));
        return new AllocationHandle(state, slot, generation);
    }

    private static void Invalidate(in AllocationHandle handle, string ownerName)
    {
        if (handle.State == null)
        {
            ThrowHelper.ThrowObjectDisposed(ownerName);
        }

        long state = Volatile.Read(ref *handle.State);
        while (true)
        {
            if (Generation(state) != handle.Generation || (int)state < 0)
            {
                ThrowHelper.ThrowObjectDisposed(ownerName);
            }

            if ((int)state != 0)
            {
                ThrowHelper.ThrowInvalidOperation(
                    $"This {ownerName} cannot be freed: it is still acquired {(int)state} time(s). Call Release() for each Acquire() first.");
            }

            long freed = (long)((ulong)(handle.Generation + 1) << 32);
            long seen = Interlocked.CompareExchange(ref *handle.State, freed, state);
            if (seen == state)
            {
                return;
            }

            state = seen;
        }
    }

    private static void ReleaseSlot(int slot, ref Entry entry)
    {
        entry.ElementType = null;
        entry.AllocatedAt = null;
        entry.Owner = null;
        entry.Address = 0;
        entry.Size = 0;
        entry.Arena = NoArena;
        while (true)
        {
            long head = Volatile.Read(ref s_freeHead);
            entry.NextFree = (int)head;
            long newHead = ((head >>> 32) + 1) << 32 | (uint)(slot + 1);
            if (Interlocked.CompareExchange(ref s_freeHead, newHead, head) == head)
            {
                return;
            }
        }
    }

    private static int TakeSlot()
    {
        while (true)
        {
            long head = Volatile.Read(ref s_freeHead);
            int top = (int)head;
            if (top == 0)
            {
                break;
            }

            int next = EntryOf(top - 1).NextFree;
            long newHead = ((head >>> 32) + 1) << 32 | (uint)next;
            if (Interlocked.CompareExchange(ref s_freeHead, newHead, head) == head)
            {
                return top - 1;
            }
        }

        int slot = Interlocked.Increment(ref s_slotsHandedOut) - 1;
        if (slot < 0)
        {
            ThrowHelper.ThrowInvalidOperation("The allocation ledger is full (2^31 live allocations).");
        }

        if ((slot >> ChunkShift) >= Volatile.Read(ref s_states).Length)
        {
            Grow(slot >> ChunkShift);
        }

        return slot;
    }

    private static void Grow(int chunkIndex)
    {
        lock (GrowLock)
        {
            long[][] states = s_states;
            if (chunkIndex < states.Length)
            {
                return;
            }

            int newLength = Math.Max(chunkIndex + 1, states.Length * 2);
            var newStates = new long[newLength][];
            var newEntries = new Entry[newLength][];
            Array.Copy(states, newStates, states.Length);
            Array.Copy(s_entries, newEntries, states.Length);
            for (int i = states.Length; i < newLength; i++)
            {
                newStates[i] = GC.AllocateArray<long>(ChunkSize, pinned: true);
                newEntries[i] = new Entry[ChunkSize];
            }

            // Entries first: a reader that sees the new states array must also see the new entries.
            Volatile.Write(ref s_entries, newEntries);
            Volatile.Write(ref s_states, newStates);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Generation(long state) => (uint)((ulong)state >> 32);

    private static long* StateOf(int slot) =>
        (long*)Unsafe.AsPointer(ref Volatile.Read(ref s_states)[slot >> ChunkShift][slot & ChunkMask]);

    private static ref Entry EntryOf(int slot) => ref Volatile.Read(ref s_entries)[slot >> ChunkShift][slot & ChunkMask];

    private delegate void LiveEntryVisitor(ref readonly Entry entry, long state);

    private static void ForEachLive(LiveEntryVisitor visit)
    {
        int slots = Volatile.Read(ref s_slotsHandedOut);
        long[][] states = Volatile.Read(ref s_states);
        for (int slot = 0; slot < slots && (slot >> ChunkShift) < states.Length; slot++)
        {
            long state = Volatile.Read(ref states[slot >> ChunkShift][slot & ChunkMask]);
            if ((Generation(state) & 1) == 0)
            {
                continue;
            }

            Entry copy = EntryOf(slot);
            // Count it only if the slot did not change hands while the entry was read.
            if (Generation(Volatile.Read(ref states[slot >> ChunkShift][slot & ChunkMask])) == Generation(state))
            {
                visit(in copy, state);
            }
        }
    }
}
