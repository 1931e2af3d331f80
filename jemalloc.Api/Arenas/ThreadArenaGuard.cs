namespace jemalloc.Arenas;

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
        ArenaAccounts.FindByIndex(arena) is { IsDestroyed: false }
            ? $"Arena {arena} belongs to a JemArena, whose Reset frees everything in it at once; a thread's default allocations (which go through its thread cache) cannot live there. Allocate in it through the JemArena instead."
            : null;
}
