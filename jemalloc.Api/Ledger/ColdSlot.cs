using System.Runtime.InteropServices;
using jemalloc.Memory;

namespace jemalloc.Ledger;

/// <summary>What allocation, free and diagnostics need: the second half of a <see cref="SlotRecord"/>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct ColdSlot
{
    /// <summary>The <c>mallocx</c> flags to free the memory with (alignment, arena; no explicit thread cache).</summary>
    public int Flags;

    /// <summary>The element type's number in <see cref="ElementTypes"/>, 0 for none.</summary>
    public int ElementType;

    /// <summary>The owning structure's kind.</summary>
    public AllocationKind Kind;

    /// <summary>A weak <see cref="GCHandle"/> to the owning object the ledger must tell about an arena reset, or 0.</summary>
    public nint Owner;
}
