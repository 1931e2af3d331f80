using System.Runtime.InteropServices;

namespace jemalloc.Ledger;

/// <summary>What an access to an allocation reads: the first half of its <see cref="SlotRecord"/>.</summary>
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
