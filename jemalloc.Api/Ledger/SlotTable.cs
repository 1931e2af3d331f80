using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics.Arm;
using jemalloc.Interop;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// The ledger's slots, in address space reserved once at start-up and committed as the number of
/// slots grows, so a slot never moves: its address is the table's base (a constant once the JIT has
/// seen this class initialized) plus the slot number times the record size. The hot record holds
/// what an access checks; the cold record what only allocation, free and diagnostics need.
/// Holds no managed references: millions of allocations cost the GC nothing.
/// </summary>
internal static unsafe class SlotTable
{
    /// <summary>The most slots the table can ever hold (a reservation of address space, not of memory).</summary>
    internal const int Capacity = 1 << 27;

    private const int CommitChunk = 1 << 16;

    private static readonly HotSlot* Hot = (HotSlot*)VirtualMemory.Reserve((nuint)Capacity * (nuint)sizeof(HotSlot));
    private static readonly ColdSlot* Cold = (ColdSlot*)VirtualMemory.Reserve((nuint)Capacity * (nuint)sizeof(ColdSlot));
    private static readonly Lock GrowLock = new();
    private static int s_committed;
    private static int s_handedOut;
    // Free-slot stack: low 32 bits = slot + 1 (0 = empty), high 32 bits = a tag against ABA.
    private static long s_freeHead;

#pragma warning disable CA1810 // The first chunk must be committed before any slot is read; an initializer cannot order that after the fields.
    static SlotTable()
#pragma warning restore CA1810
    {
        CommitUpTo(1);
    }

    /// <summary>How many slots have ever been handed out (live, free or retired): the range diagnostics and resets scan.</summary>
    internal static int HandedOut => Math.Min(Volatile.Read(ref s_handedOut), Volatile.Read(ref s_committed));

    /// <summary>The hot record of <paramref name="slot"/>; every slot below <see cref="Capacity"/> may be addressed, committed or not, but only committed ones read.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref HotSlot HotOf(int slot) => ref Hot[(uint)slot];

    /// <summary>
    /// Reads a slot's key so that the pointer read after it belongs to the same allocation: a plain
    /// load where the CPU keeps loads in order (x64), so the JIT may keep it out of loops; an
    /// acquire load on Arm64, whose loads may otherwise pass each other.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long ReadKey(ref HotSlot slot) => ArmBase.IsSupported ? Volatile.Read(ref slot.Key) : slot.Key;

    /// <summary>The cold record of <paramref name="slot"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref ColdSlot ColdOf(int slot) => ref Cold[(uint)slot];

    /// <summary>A free slot, from the free stack or a new one.</summary>
    /// <exception cref="OutOfMemoryException">The table is full or the OS refused to commit more of it.</exception>
    internal static int Take()
    {
        while (true)
        {
            long head = Volatile.Read(ref s_freeHead);
            int top = (int)head;
            if (top == 0)
            {
                break;
            }

            int next = Cold[top - 1].NextFree;
            long newHead = ((head >>> 32) + 1) << 32 | (uint)next;
            if (Interlocked.CompareExchange(ref s_freeHead, newHead, head) == head)
            {
                return top - 1;
            }
        }

        int slot = Interlocked.Increment(ref s_handedOut) - 1;
        if ((uint)slot >= Capacity)
        {
            Interlocked.Decrement(ref s_handedOut);
            ThrowHelper.ThrowInvalidOperation($"The allocation ledger is full: it records at most {Capacity:N0} live allocations and leases.");
        }

        if (slot >= Volatile.Read(ref s_committed))
        {
            CommitUpTo(slot + 1);
        }

        return slot;
    }

    /// <summary>Puts a slot whose state is free back on the free stack, or keeps it out for good once its generation is spent.</summary>
    internal static void Return(int slot)
    {
        if (SlotState.Generation(Volatile.Read(ref Hot[slot].State)) >= SlotState.LastGeneration)
        {
            return;
        }

        ref ColdSlot cold = ref Cold[slot];
        while (true)
        {
            long head = Volatile.Read(ref s_freeHead);
            cold.NextFree = (int)head;
            long newHead = ((head >>> 32) + 1) << 32 | (uint)(slot + 1);
            if (Interlocked.CompareExchange(ref s_freeHead, newHead, head) == head)
            {
                return;
            }
        }
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
            VirtualMemory.Commit(Hot + committed, (nuint)count * (nuint)sizeof(HotSlot));
            VirtualMemory.Commit(Cold + committed, (nuint)count * (nuint)sizeof(ColdSlot));
            Volatile.Write(ref s_committed, target);
        }
    }
}

/// <summary>What an access to an allocation reads: 32 bytes, so two share no cache line with a third.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct HotSlot
{
    /// <summary>The generation and, for a FixedBuffer, its element count, as <see cref="SlotState.MakeKey"/> lays them out: one load checks both.</summary>
    public long Key;

    /// <summary>The allocation's address. Kept after a free (until the slot is reused) so that a racing access reads the old block, never a torn pointer.</summary>
    public nint Pointer;

    /// <summary>See <see cref="SlotState"/>.</summary>
    public long State;

    /// <summary>The requested size in bytes.</summary>
    public nuint Size;
}

/// <summary>What allocation, free and diagnostics need.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct ColdSlot
{
    /// <summary>The <c>mallocx</c> flags to free the memory with (alignment, arena; no explicit thread cache).</summary>
    public int Flags;

    /// <summary>While free: the next free slot + 1 (0 = none).</summary>
    public int NextFree;

    /// <summary>The element type's number in <see cref="ElementTypes"/>, 0 for none.</summary>
    public int ElementType;

    /// <summary>The owning structure's kind.</summary>
    public AllocationKind Kind;

    /// <summary>A weak <see cref="GCHandle"/> to the owning object the ledger must tell about an arena reset, or 0.</summary>
    public nint Owner;
}
