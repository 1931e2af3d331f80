using System.Runtime.InteropServices;

namespace jemalloc;

/// <summary>
/// Checked mode's store of freed blocks: each is filled with <see cref="Poison"/> and held back from
/// jemalloc (its slot too) until the quarantine is over its byte limit, then checked and freed,
/// oldest first. An access that raced the free therefore reads poison instead of another
/// structure's data, and a write that landed is found when the block leaves.
/// </summary>
/// <remarks>
/// Memory in an explicit arena is poisoned but not held: an arena reset may free it at any time.
/// Blocks larger than the limit are freed at once. Slow by design: one pass to poison and one to check.
/// </remarks>
internal static unsafe class Quarantine
{
    /// <summary>The byte freed memory is filled with in checked mode.</summary>
    internal const byte Poison = 0xDB;

    internal const long DefaultLimit = 256L << 20;
    internal const string EnabledVariable = "JEMALLOC_NET_CHECKED";
    internal const string LimitVariable = "JEMALLOC_NET_QUARANTINE_BYTES";

    // The slot of a resize's old block: it has none.
    private const int NoSlot = -1;

    private static readonly Lock Gate = new();
    private static readonly Queue<Block> Blocks = new();
    private static long s_bytes;
    private static long s_limit = ReadLimit();
    private static long s_detected;
    private static volatile bool s_enabled = ReadEnabled();

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
    internal static bool TryAdmit(int slot, void* memory, nuint size, int flags)
    {
        if (!s_enabled)
        {
            return false;
        }

        if ((flags >>> MallocxFlags.ArenaShift) != 0)
        {
            NativeMemory.Fill(memory, size, Poison);
            return false;
        }

        if (size > (ulong)Limit)
        {
            return false;
        }

        ref ColdSlot cold = ref SlotTable.ColdOf(slot);
        Admit(new Block(slot, (nint)memory, size, flags, cold.Kind, cold.ElementType));
        return true;
    }

    /// <summary>
    /// In checked mode, poisons and holds back the old block of a resize that moved: it has no slot of
    /// its own (the allocation's slot went with the new block).
    /// </summary>
    /// <returns><see langword="true"/> if the quarantine took the block; <see langword="false"/> if the caller must free it.</returns>
    internal static bool TryAdmitMoved(void* memory, nuint size, int flags, AllocationKind kind, int elementType)
    {
        if (!s_enabled || size > (ulong)Limit)
        {
            return false;
        }

        if ((flags >>> MallocxFlags.ArenaShift) != 0)
        {
            // As a free in an arena: poisoned, not held (a reset of the arena may free it any time).
            NativeMemory.Fill(memory, size, Poison);
            return false;
        }

        Admit(new Block(NoSlot, (nint)memory, size, flags, kind, elementType));
        return true;
    }

    private static void Admit(Block block)
    {
        NativeMemory.Fill((void*)block.Address, block.Size, Poison);
        lock (Gate)
        {
            Blocks.Enqueue(block);
            s_bytes += (long)block.Size;
        }

        EvictOver(Limit);
    }

    /// <summary>In checked mode, poisons a live block an arena reset is about to free.</summary>
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
            Block block;
            lock (Gate)
            {
                if (s_bytes <= limit || Blocks.Count == 0)
                {
                    return;
                }

                block = Blocks.Dequeue();
                s_bytes -= (long)block.Size;
            }

            Release(block);
        }
    }

    private static void Release(Block block)
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

        if (report is not null)
        {
            WriteDetected?.Invoke(null, report);
        }
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

    private static bool ReadEnabled() => Environment.GetEnvironmentVariable(EnabledVariable) is "1" or "true" or "True" or "TRUE";

    private static long ReadLimit() =>
        long.TryParse(Environment.GetEnvironmentVariable(LimitVariable), out long limit) && limit >= 0 ? limit : DefaultLimit;

    // Kind and element type are copied in: a moved block's slot describes the allocation's new block.
    private readonly record struct Block(int Slot, nint Address, nuint Size, int Flags, AllocationKind Kind, int ElementType);
}
