namespace jemalloc.Ledger;

/// <summary>
/// Up to <see cref="SlotCache.Batch"/> free ledger slots moving between a thread's
/// <see cref="SlotCache"/> and the shared store of <see cref="SlotTable"/> as one unit. A cache
/// keeps the batch it emptied last as its spare and fills it when it gives slots back, so in a
/// steady state batches circulate and nothing is allocated.
/// </summary>
internal sealed class SlotBatch
{
    /// <summary>The slots, in <c>[0, Count)</c>.</summary>
    public readonly int[] Slots = new int[SlotCache.Batch];

    /// <summary>How many of <see cref="Slots"/> hold a free slot.</summary>
    public int Count;
}
