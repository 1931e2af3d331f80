using System.Runtime.InteropServices;

namespace jemalloc.Ledger;

/// <summary>
/// A slot's whole record: one 64-byte cache line, so a create and a free write one line of the ledger
/// (not one in each of two tables), and no two slots share a line.
/// </summary>
[StructLayout(LayoutKind.Sequential, Size = 64)]
internal struct SlotRecord
{
    /// <summary>What an access checks.</summary>
    public HotSlot Hot;

    /// <summary>What only allocation, free and diagnostics read.</summary>
    public ColdSlot Cold;
}
