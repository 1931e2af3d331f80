namespace jemalloc.Ledger;

/// <summary>Whether the ledger has structures in an arena, so that nothing resets it behind the ledger's back.</summary>
internal static class LedgerArenaUse
{
    /// <summary>
    /// Whether any structure allocated in <paramref name="arena"/> is live, or disposed but not yet
    /// freed. A scan of the slot table: for rare calls (an arena reset or destruction through mallctl).
    /// </summary>
    internal static bool HasStructuresIn(uint arena)
    {
        int slots = SlotTable.HandedOut;
        for (int slot = 0; slot < slots; slot++)
        {
            long state = Volatile.Read(ref SlotTable.HotOf(slot).State);
            if ((SlotState.IsLive(state) || (state & SlotState.PendingFree) != 0) && ArenaOf(SlotTable.ColdOf(slot).Flags) == arena)
            {
                return true;
            }
        }

        return false;
    }

    // MALLOCX_ARENA(a) is (a + 1) << 20; no arena bits -> uint.MaxValue, which names no arena.
    private static uint ArenaOf(int flags) => ((uint)flags >> MallocxFlags.ArenaShift) - 1;
}
