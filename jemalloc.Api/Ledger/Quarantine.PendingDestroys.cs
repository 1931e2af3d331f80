namespace jemalloc.Ledger;

/// <summary>
/// The arenas whose destruction waits for the quarantine: a checked-mode <c>JemArena.Dispose</c>
/// frees its structures into the quarantine, as a checked reset does, and destroys the jemalloc arena
/// (which unmaps its memory) only once no block of it is held, so an access racing the dispose reads
/// poison instead of unmapped or reused memory.
/// </summary>
internal static partial class Quarantine
{
    // More arenas than this waiting: the oldest one's blocks leave the quarantine early (checked and
    // freed, as an eviction frees the oldest blocks), so waiting destructions cannot use up jemalloc's
    // arena indices.
    private const int MaxPendingDestroys = 64;

    // Under Gate: per arena waiting to be destroyed, its blocks still held and the destruction.
    private static Dictionary<uint, PendingDestroy>? s_pendingDestroys;
    private static readonly Queue<uint> PendingOrder = new();

    /// <summary>The number of arenas whose destruction waits for their blocks to leave the quarantine.</summary>
    internal static int PendingDestroyCount
    {
        get
        {
            lock (Gate)
            {
                return s_pendingDestroys?.Count ?? 0;
            }
        }
    }

    /// <summary>
    /// Runs <paramref name="destroy"/> once the quarantine holds no block of <paramref name="arena"/>:
    /// now if it holds none, otherwise on the thread whose eviction (or <see cref="Flush"/>) frees the
    /// last one. The caller has made sure no new block of the arena can come (its gate is destroyed).
    /// <paramref name="destroy"/> must not throw.
    /// </summary>
    internal static void DestroyWhenDrained(uint arena, Action destroy)
    {
        bool now = true;
        uint? oldest = null;
        lock (Gate)
        {
            int held = 0;
            foreach (Block block in Blocks)
            {
                if (AllocationLedger.ArenaOf(block.Flags) == arena)
                {
                    held++;
                }
            }

            if (held > 0)
            {
                now = false;
                (s_pendingDestroys ??= []).Add(arena, new PendingDestroy(destroy) { Held = held });
                PendingOrder.Enqueue(arena);
                while (s_pendingDestroys.Count > MaxPendingDestroys && oldest is null)
                {
                    uint candidate = PendingOrder.Dequeue();
                    if (s_pendingDestroys.ContainsKey(candidate))
                    {
                        oldest = candidate;
                    }
                }
            }
        }

        if (now)
        {
            destroy();
        }

        if (oldest is { } early)
        {
            // Its blocks checked and freed now, then its destruction (ReleaseArena runs it).
            ReleaseArena(early);
        }
    }

    // Under Gate: a block of an arena waiting to be destroyed came in after all (a free that was
    // already past the arena's gate).
    private static void CountInPendingArena(Block block)
    {
        if (s_pendingDestroys is not null && s_pendingDestroys.TryGetValue(AllocationLedger.ArenaOf(block.Flags), out PendingDestroy? pending))
        {
            pending.Held++;
        }
    }

    // Under Gate: a block left the queue; returns the destruction its arena waited for if it was the last.
    private static Action? UncountInPendingArena(Block block)
    {
        uint arena = AllocationLedger.ArenaOf(block.Flags);
        if (s_pendingDestroys is null || !s_pendingDestroys.TryGetValue(arena, out PendingDestroy? pending) || --pending.Held > 0)
        {
            return null;
        }

        s_pendingDestroys.Remove(arena);
        return pending.Destroy;
    }

    /// <summary>Takes the destruction <paramref name="arena"/> waits for, if any (its blocks have just been released).</summary>
    private static Action? TakePendingDestroy(uint arena)
    {
        lock (Gate)
        {
            return s_pendingDestroys is not null && s_pendingDestroys.Remove(arena, out PendingDestroy? pending) ? pending.Destroy : null;
        }
    }

    private sealed class PendingDestroy(Action destroy)
    {
        internal Action Destroy { get; } = destroy;

        internal int Held { get; set; }
    }
}
