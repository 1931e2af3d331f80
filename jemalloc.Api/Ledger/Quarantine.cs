using System.Runtime.InteropServices;
using jemalloc.Configuration;
using jemalloc.Memory;

namespace jemalloc.Ledger;

/// <summary>
/// Checked mode's store of freed blocks: each is filled with <see cref="Poison"/> and held back from
/// jemalloc (its slot too) until the quarantine is over its byte limit, then checked and freed,
/// oldest first. An access that raced the free therefore reads poison instead of another
/// structure's data, and a write that landed is found when the block leaves.
/// </summary>
/// <remarks>
/// Memory in an explicit arena is held too, so the arena's next allocations cannot get it. An arena
/// reset in checked mode therefore frees its structures one by one into the quarantine instead of
/// resetting the arena; a reset or destruction that does run (<see cref="ReleaseArena"/>) first takes
/// the arena's blocks out. Blocks larger than the limit are freed at once. Slow by design: one pass to
/// poison and one to check.
/// </remarks>
internal static unsafe partial class Quarantine
{
    /// <summary>The byte freed memory is filled with in checked mode.</summary>
    internal const byte Poison = 0xDB;

    // The slot of a resize's old block: it has none.
    private const int NoSlot = -1;

    private static readonly Lock Gate = new();

    // Held from taking blocks out of the queue until they are freed, so that ReleaseArena returns only
    // once no block of the arena is left in the quarantine or on its way out (an eviction running on
    // another thread would otherwise free it after the arena's reset). Taken before Gate, never after.
    private static readonly Lock Releasing = new();
    private static readonly Queue<Block> Blocks = new();
    private static long s_bytes;
    private static long s_limit = CheckedModeVariables.QuarantineBytesAtStartup.Value;
    private static long s_detected;
    private static volatile bool s_enabled = CheckedModeVariables.EnabledAtStartup.Value;

    internal static bool Enabled
    {
        get => s_enabled;
        set
        {
            s_enabled = value;
            if (!value)
            {
                Flush();
            }
        }
    }

    internal static long Limit
    {
        get => Volatile.Read(ref s_limit);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Volatile.Write(ref s_limit, value);
            EvictOver(value);
        }
    }

    internal static long HeldBytes => Volatile.Read(ref s_bytes);

    internal static long Detected => Volatile.Read(ref s_detected);

    /// <summary>Raised (on the thread whose free evicted the block) when a quarantined block was written to after it was freed.</summary>
    internal static event EventHandler<UseAfterFreeEventArgs>? WriteDetected;

    /// <summary>
    /// In checked mode, poisons a block whose slot was just invalidated and holds it and its slot back.
    /// </summary>
    /// <returns><see langword="true"/> if the quarantine took the block (and will free it and return the slot); <see langword="false"/> if the caller must.</returns>
    /// <param name="slot">The block's slot, which the quarantine returns when it frees the block.</param>
    /// <param name="memory">The block.</param>
    /// <param name="size">Its size in bytes.</param>
    /// <param name="flags">The flags to free it with.</param>
    /// <param name="evict">
    /// Whether to free the oldest blocks now if the quarantine is over its limit; false for an arena
    /// reset, which holds the arena's gate closed and calls <see cref="EvictOverLimit"/> once it is open
    /// again (a <see cref="WriteDetected"/> handler may then allocate in the arena).
    /// </param>
    /// <returns><see langword="true"/> if the quarantine took the block (and will free it and return the slot); <see langword="false"/> if the caller must.</returns>
    internal static bool TryAdmit(int slot, void* memory, nuint size, int flags, bool evict = true)
    {
        if (!s_enabled || size > (ulong)Limit)
        {
            return false;
        }

        ref ColdSlot cold = ref SlotTable.ColdOf(slot);
        Admit(new Block(slot, (nint)memory, size, flags, cold.Kind, cold.ElementType), evict);
        return true;
    }

    /// <summary>
    /// In checked mode, poisons and holds back a block that has no slot of its own: the old block of a
    /// resize that moved (the allocation's slot went with the new block), or a raw allocation of an
    /// arena that a reset frees.
    /// </summary>
    /// <returns><see langword="true"/> if the quarantine took the block; <see langword="false"/> if the caller must free it.</returns>
    internal static bool TryAdmitWithoutSlot(void* memory, nuint size, int flags, AllocationKind kind, int elementType, bool evict = true)
    {
        if (!s_enabled || size > (ulong)Limit)
        {
            return false;
        }

        Admit(new Block(NoSlot, (nint)memory, size, flags, kind, elementType), evict);
        return true;
    }

    private static void Admit(Block block, bool evict)
    {
        NativeMemory.Fill((void*)block.Address, block.Size, Poison);
        lock (Gate)
        {
            Blocks.Enqueue(block);
            s_bytes += (long)block.Size;
            CountInPendingArena(block);
        }

        if (evict)
        {
            EvictOver(Limit);
        }
    }

    /// <summary>Checks and frees the oldest blocks while the quarantine is over its limit.</summary>
    internal static void EvictOverLimit() => EvictOver(Limit);

    /// <summary>
    /// Checks and frees every held block of <paramref name="arena"/> now, before a reset or destruction
    /// of the arena frees all of its memory (a held block would otherwise be freed twice). Returns once
    /// no block of the arena is held or being freed. The caller holds the arena's gate closed, so no
    /// new block of the arena comes in meanwhile.
    /// </summary>
    internal static void ReleaseArena(uint arena)
    {
        List<UseAfterFreeEventArgs>? reports = null;
        Action? destroy;
        lock (Releasing)
        {
            List<Block>? taken = null;
            lock (Gate)
            {
                int count = Blocks.Count;
                for (int i = 0; i < count; i++)
                {
                    Block block = Blocks.Dequeue();
                    if (AllocationLedger.ArenaOf(block.Flags) == arena)
                    {
                        (taken ??= []).Add(block);
                        s_bytes -= (long)block.Size;
                    }
                    else
                    {
                        Blocks.Enqueue(block);
                    }
                }
            }

            foreach (Block block in taken ?? [])
            {
                if (Release(block) is { } report)
                {
                    (reports ??= []).Add(report);
                }
            }

            destroy = TakePendingDestroy(arena);
        }

        destroy?.Invoke();
        foreach (UseAfterFreeEventArgs report in reports ?? [])
        {
            WriteDetected?.Invoke(null, report);
        }
    }

    /// <summary>
    /// In checked mode, poisons a live block an arena reset is about to free with the rest of the arena
    /// (the reset that runs because the arena has raw allocations made outside checked mode, which only
    /// the arena's reset can free; see <c>JemArena.Reset</c>).
    /// </summary>
    internal static void PoisonForReset(void* memory, nuint size)
    {
        if (s_enabled && memory != null)
        {
            NativeMemory.Fill(memory, size, Poison);
        }
    }

    /// <summary>Checks and frees every held block.</summary>
    internal static void Flush() => EvictOver(0);

    private static void EvictOver(long limit)
    {
        while (true)
        {
            UseAfterFreeEventArgs? report;
            Action? destroy;
            lock (Releasing)
            {
                Block block;
                lock (Gate)
                {
                    if (s_bytes <= limit || Blocks.Count == 0)
                    {
                        return;
                    }

                    block = Blocks.Dequeue();
                    s_bytes -= (long)block.Size;
                    destroy = UncountInPendingArena(block);
                }

                report = Release(block);
            }

            // Outside the locks: the arena's last held block is freed, so its destruction waited
            // for nothing else; a handler may free (and so admit and evict) on this thread.
            destroy?.Invoke();
            if (report is not null)
            {
                WriteDetected?.Invoke(null, report);
            }
        }
    }

    // Checks and frees one block taken out of the queue; returns the report of a write found in it.
    private static UseAfterFreeEventArgs? Release(Block block)
    {
        long offset = FindWrite((byte*)block.Address, block.Size);
        UseAfterFreeEventArgs? report = null;
        if (offset >= 0)
        {
            Interlocked.Increment(ref s_detected);
            report = new UseAfterFreeEventArgs(block.Size, block.Kind, ElementTypes.TypeOf(block.ElementType), offset);
        }

        NativeAllocator.Free((void*)block.Address, block.Size, block.Flags);
        if (block.Slot != NoSlot)
        {
            SlotTable.Return(block.Slot);
        }

        return report;
    }

    private static long FindWrite(byte* memory, nuint size)
    {
        for (nuint done = 0; done < size;)
        {
            int length = (int)Math.Min(size - done, (nuint)int.MaxValue);
            int found = new ReadOnlySpan<byte>(memory + done, length).IndexOfAnyExcept(Poison);
            if (found >= 0)
            {
                return (long)done + found;
            }

            done += (nuint)length;
        }

        return -1;
    }

    // Kind and element type are copied in: a moved block's slot describes the allocation's new block.
    private readonly record struct Block(int Slot, nint Address, nuint Size, int Flags, AllocationKind Kind, int ElementType);
}
