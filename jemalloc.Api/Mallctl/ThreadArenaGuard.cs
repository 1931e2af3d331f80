namespace jemalloc.Mallctl;

/// <summary>
/// The one rule on moving a thread to an arena (<c>thread.arena</c>), used by
/// <see cref="JemTuning.ThreadArena"/> and by every mallctl entry point.
/// </summary>
internal static class ThreadArenaGuard
{
    /// <summary>Why the calling thread may not be moved to <paramref name="arena"/>, or <see langword="null"/> when it may.</summary>
    /// <remarks>
    /// A <see cref="JemArena"/>'s reset frees memory all at once, which a thread's cached default
    /// allocations must never be part of.
    /// </remarks>
    internal static string? Refusal(uint arena) =>
        MallctlPolicy.BelongsToJemArena(arena)
            ? $"Arena {arena} belongs to a JemArena (or is kept idle for the next one), whose Reset frees everything in it at once; a thread's default allocations (which go through its thread cache) cannot live there. Allocate in it through the JemArena instead."
            : null;

    // Arenas a thread was moved onto: its default allocations (which the ledger cannot tell by their
    // flags) and its thread cache's blocks may be there for good, so such an arena is never reset.
    private static readonly int[] MovedOnto = new int[ArenaDirectory.Limit];

    /// <summary>Records that a thread is being moved onto <paramref name="arena"/> (before the move, so a racing reset is refused).</summary>
    internal static void RecordMove(uint arena)
    {
        if (arena < (uint)MovedOnto.Length)
        {
            Volatile.Write(ref MovedOnto[arena], 1);
        }
    }

    /// <summary>Whether a thread was ever moved onto <paramref name="arena"/> with <c>thread.arena</c>.</summary>
    internal static bool WasMovedOnto(uint arena) =>
        arena < (uint)MovedOnto.Length && Volatile.Read(ref MovedOnto[arena]) != 0;
}
