using System.Diagnostics;
using System.Runtime.InteropServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

public static unsafe partial class AllocationLedger
{
    // How long a reset waits for a disposed structure whose memory a native call still holds.
    private static readonly TimeSpan PendingFreeTimeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Invalidates every live allocation in <paramref name="arena"/> and tells the owning arrays. Waits
    /// for structures disposed just before to finish freeing; fails, invalidating nothing, if any
    /// allocation in the arena is acquired or leased (a rented <see cref="JemMemoryPool"/> block is
    /// acquired by its rent). The caller holds the arena's gate closed, so no allocation or ordinary
    /// free in the arena runs meanwhile.
    /// </summary>
    /// <param name="arena">The arena's index.</param>
    /// <param name="freeEach">
    /// Checked mode's reset: free each allocation now, through the quarantine (poisoned and held, so
    /// that the arena's next allocations cannot get the memory while a racing access may still reach
    /// it), and leave the arena itself alone. Otherwise the memory is left to the arena's reset or
    /// destruction, which frees it all at once (poisoned first in checked mode).
    /// </param>
    /// <returns>The number of allocations invalidated.</returns>
    /// <exception cref="InvalidOperationException">An allocation in the arena is acquired or leased, or a native call held a disposed one for longer than the timeout.</exception>
    internal static int InvalidateArena(uint arena, bool freeEach = false)
    {
        int slots = SlotTable.HandedOut;

        // First pass: lock each live slot of the arena against acquisition, leases and freeing (the
        // resetting bit); if one is in use, undo and fail. The bit marks the locked slots, so a reset
        // of millions of small structures needs no list.
        for (int slot = 0; slot < slots; slot++)
        {
            if (!TryLockForReset(slot, arena, out string? failure))
            {
                UnlockForReset(arena, slot);
                ThrowHelper.ThrowInvalidOperation(failure!);
            }
        }

        int invalidated = 0;
        for (int slot = 0; slot < slots; slot++)
        {
            ref HotSlot hot = ref SlotTable.HotOf(slot);
            long state = Volatile.Read(ref hot.State);
            if (!SlotState.IsLive(state) || (state & SlotState.Resetting) == 0 || ArenaOf(SlotTable.ColdOf(slot).Flags) != arena)
            {
                continue;
            }

            void* memory = (void*)hot.Pointer;
            nuint size = hot.Size;
            if (!freeEach)
            {
                Quarantine.PoisonForReset(memory, size);
            }

            uint dead = SlotState.Generation(state) + 1;
            // The key first: a thread that sees the state dead (its Acquire throws) must not then
            // see the key still live (IsValid true). The resetting bit keeps both from being used meanwhile.
            Volatile.Write(ref hot.Key, SlotState.MakeKey(dead));
            Volatile.Write(ref hot.State, SlotState.Make(dead));
            ref ColdSlot cold = ref SlotTable.ColdOf(slot);
            if (cold.Owner != 0 && GCHandle.FromIntPtr(cold.Owner).Target is IAllocationOwner owner)
            {
                owner.OnInvalidated();
            }

            ForgetOwner(ref cold);
            ForgetStackTrace(slot);
            if (!freeEach)
            {
                SlotTable.Return(slot);
            }
            else if (!Quarantine.TryAdmit(slot, memory, size, cold.Flags, evict: false))
            {
                // Too big for the quarantine (or checked mode was turned off meanwhile): freed now, as a free would.
                NativeAllocator.Free(memory, size, cold.Flags);
                SlotTable.Return(slot);
            }

            invalidated++;
        }

        return invalidated;
    }

    private static bool TryLockForReset(int slot, uint arena, out string? failure)
    {
        failure = null;
        ref HotSlot hot = ref SlotTable.HotOf(slot);
        var waited = Stopwatch.StartNew();
        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref hot.State);
            // Read after the state: if the slot is live, these are its allocation's flags (a change of
            // hands makes the compare-and-swap below fail).
            ref ColdSlot cold = ref SlotTable.ColdOf(slot);
            if (ArenaOf(cold.Flags) != arena)
            {
                return true;
            }

            if ((state & SlotState.PendingFree) != 0)
            {
                // Disposed: its ReleaseHandle frees it, past the closed gate, as soon as no native call holds it.
                if (waited.Elapsed > PendingFreeTimeout)
                {
                    failure = $"A {cold.Kind} of {hot.Size:N0} bytes in arena {arena} was disposed, but a native call has held it for more than {PendingFreeTimeout.TotalSeconds:N0} s; the arena was not reset.";
                    return false;
                }

                spin.SpinOnce(sleep1Threshold: -1);
                continue;
            }

            if (!SlotState.IsLive(state))
            {
                return true;
            }

            if ((state & SlotState.CountMask) != 0)
            {
                failure = cold.Kind switch
                {
                    AllocationKind.MemoryPoolBlock => DescribeRentedPoolBlocks(arena),
                    // The writer's own hold (spans it handed out) or a pin of its memory: only the writer can end them.
                    AllocationKind.BufferWriter => $"A NativeBufferWriter's block of {hot.Size:N0} bytes in arena {arena} is {LedgerErrors.DescribeUse(state)}: the writer handed out spans or memory of it, or it is pinned. Dispose the writer (or hand its block over) and its MemoryHandles before resetting or destroying the arena. Nothing was reset.",
                    AllocationKind.StringStoreScopeAnchor => $"A Utf8StringStore in arena {arena} is held by {SlotState.Leases(state)} open read scope(s) (EnterRead) or a write running: its strings are being read or written. Dispose those read scopes (and let the write end) before resetting or destroying the arena. Nothing was reset.",
                    _ => $"A {cold.Kind} of {hot.Size:N0} bytes in arena {arena} is {LedgerErrors.DescribeUse(state)}; release it before resetting or destroying the arena. Nothing was reset.",
                };
                return false;
            }

            if (Interlocked.CompareExchange(ref hot.State, state | SlotState.Resetting, state) == state)
            {
                return true;
            }
        }
    }

    // Undoes the first pass up to (not including) the slot that failed: a locked slot had no counts,
    // so clearing the bit restores it exactly.
    private static void UnlockForReset(uint arena, int failedSlot)
    {
        for (int slot = 0; slot < failedSlot; slot++)
        {
            ref HotSlot hot = ref SlotTable.HotOf(slot);
            long state = Volatile.Read(ref hot.State);
            if (SlotState.IsLive(state) && (state & SlotState.Resetting) != 0 && ArenaOf(SlotTable.ColdOf(slot).Flags) == arena)
            {
                Volatile.Write(ref hot.State, state & ~SlotState.Resetting);
            }
        }
    }

    // A reset that would free rented pool blocks is refused: a span of one, taken while its owner was
    // live, would write into whatever the arena allocates next. Counts every such block for the message.
    private static string DescribeRentedPoolBlocks(uint arena)
    {
        int slots = SlotTable.HandedOut;
        long blocks = 0;
        long bytes = 0;
        for (int slot = 0; slot < slots; slot++)
        {
            ref HotSlot hot = ref SlotTable.HotOf(slot);
            long state = Volatile.Read(ref hot.State);
            ref ColdSlot cold = ref SlotTable.ColdOf(slot);
            if (SlotState.IsLive(state) && (state & SlotState.CountMask) != 0 && cold.Kind == AllocationKind.MemoryPoolBlock && ArenaOf(cold.Flags) == arena)
            {
                blocks++;
                bytes += (long)hot.Size;
            }
        }

        return $"{blocks:N0} JemMemoryPool block(s) of {bytes:N0} bytes in all in arena {arena} are rented (an owner not yet disposed) or pinned; " +
            "dispose those owners and end their pins before resetting or destroying the arena (a span of a rented block would otherwise reach memory the arena reuses). Nothing was reset.";
    }

    /// <summary>The arena index <paramref name="flags"/> name: MALLOCX_ARENA(a) is (a + 1) &lt;&lt; 20; no arena bits give <see cref="uint.MaxValue"/>, which names no arena.</summary>
    internal static uint ArenaOf(int flags) => ((uint)flags >> MallocxFlags.ArenaShift) - 1;
}
