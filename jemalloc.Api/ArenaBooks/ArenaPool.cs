using jemalloc.HugePages;
using jemalloc.Mallctl;

namespace jemalloc.ArenaBooks;

/// <summary>
/// The jemalloc arenas of disposed <see cref="JemArena"/>s, reset and purged, kept for the next
/// <see cref="JemArena"/> instead of destroyed: <c>arena.&lt;i&gt;.destroy</c> leaves jemalloc's
/// per-arena metadata block mapped (with <c>opt.retain</c>, its pages are only purged), and a new
/// arena maps a new one, so creating and destroying arenas in a loop grows the address space and the
/// mapping count without bound.
/// </summary>
/// <remarks>
/// <para>
/// A kept arena is still jemalloc's arena of its previous owner's <see cref="ArenaAccount"/>, which is
/// destroyed (every entry fails) but not gone: <see cref="ArenaAccounts.BelongsToLiveArena"/> answers
/// for it, so no raw mallctl call resets, destroys or moves a thread onto it. Taking it registers a new
/// account at its index, after restoring every per-arena setting to what <c>arenas.create</c> gives.
/// </para>
/// <para>
/// An arena is destroyed as before instead of kept when the pool is full (<see cref="Capacity"/>), when
/// a thread was ever moved onto it (its default allocations may be there), when memory in it was
/// advised for huge pages (the advice stays on its address ranges, and no call undoes it to the
/// kernel's default), or when its extent hooks are not jemalloc's own.
/// </para>
/// </remarks>
internal static unsafe class ArenaPool
{
    /// <summary>The most arenas kept at once.</summary>
    internal const int Capacity = 32;

    private static readonly Lock Gate = new();
    private static readonly Stack<ArenaAccount> Idle = new();
    private static FreshSettings? s_fresh;

    /// <summary>The arenas kept now.</summary>
    internal static int Count
    {
        get
        {
            lock (Gate)
            {
                return Idle.Count;
            }
        }
    }

    /// <summary>Whether arena <paramref name="index"/> is kept in the pool now.</summary>
    internal static bool Holds(uint index)
    {
        lock (Gate)
        {
            foreach (ArenaAccount account in Idle)
            {
                if (account.Index == index)
                {
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>
    /// Records, once, the settings of an arena just made by <c>arenas.create</c> that no global default
    /// gives back later: its extent hooks, oversize threshold and retained-growth limit.
    /// </summary>
    internal static void NoteFresh(uint index)
    {
        if (Volatile.Read(ref s_fresh) is not null)
        {
            return;
        }

        nint hooks = 0;
        nuint length = (nuint)sizeof(nint);
        if (MallctlClient.Native($"arena.{index}.extent_hooks", &hooks, &length, null, 0) != 0)
        {
            return; // Without the hooks no arena can be told safe to keep: none is kept.
        }

        Volatile.Write(ref s_fresh, new FreshSettings(hooks, ReadSize($"arena.{index}.oversize_threshold"), ReadSize($"arena.{index}.retain_grow_limit")));
    }

    /// <summary>
    /// With nothing in flight in the arena, its thread caches flushed and its quarantined blocks
    /// released: if the arena may be kept, frees everything in it (<c>arena.&lt;i&gt;.reset</c>) and
    /// returns its pages to the OS (<c>arena.&lt;i&gt;.purge</c>), as a destruction would.
    /// </summary>
    /// <param name="index">The arena.</param>
    /// <param name="counts">Its allocation counters after the reset, where its next owner's statistics start.</param>
    /// <returns><see langword="false"/> when it must be destroyed instead (nothing was done).</returns>
    internal static bool TryReset(uint index, out ArenaCounts counts)
    {
        counts = default;
        if (Volatile.Read(ref s_fresh) is not { } fresh || Count >= Capacity ||
            ThreadArenaGuard.WasMovedOnto(index) || HugePageAdvisor.WasAdvisedIn(index))
        {
            return false;
        }

        nint hooks = 0;
        nuint length = (nuint)sizeof(nint);
        if (MallctlClient.Native($"arena.{index}.extent_hooks", &hooks, &length, null, 0) != 0 || hooks != fresh.ExtentHooks)
        {
            return false;
        }

        if (MallctlClient.Native($"arena.{index}.reset", null, null, null, 0) != 0 ||
            MallctlClient.Native($"arena.{index}.purge", null, null, null, 0) != 0)
        {
            return false;
        }

        counts = ReadCounts(index);
        return true;
    }

    /// <summary>
    /// Keeps the arena of <paramref name="previous"/> (reset by <see cref="TryReset"/>, the account
    /// marked destroyed), or destroys it when the pool filled up meanwhile. Throws nothing.
    /// </summary>
    internal static void Add(ArenaAccount previous)
    {
        lock (Gate)
        {
            if (Idle.Count < Capacity)
            {
                Idle.Push(previous);
                return;
            }
        }

        DestroyQuietly(previous);
    }

    /// <summary>
    /// Takes a kept arena for a new owner, its settings restored to a fresh arena's.
    /// </summary>
    /// <returns>The previous owner's account (its index and final counters), or <see langword="null"/> when none is kept.</returns>
    internal static ArenaAccount? TryTake()
    {
        while (true)
        {
            ArenaAccount? previous;
            lock (Gate)
            {
                if (!Idle.TryPop(out previous))
                {
                    return null;
                }
            }

            if (TryRestoreFresh(previous.Index))
            {
                return previous;
            }

            DestroyQuietly(previous);
        }
    }

    /// <summary>Destroys one kept arena, so that jemalloc has an index to reuse (it has no more than 4095).</summary>
    /// <returns>Whether one was destroyed.</returns>
    internal static bool DestroyOne()
    {
        ArenaAccount? previous;
        lock (Gate)
        {
            if (!Idle.TryPop(out previous))
            {
                return false;
            }
        }

        return DestroyQuietly(previous);
    }

    // A fresh arena's settings: decay times from arenas.{dirty,muzzy}_decay_ms, dss from the default
    // (arena.4096.dss), the rest as recorded from the first arena made (no global gives them).
    private static bool TryRestoreFresh(uint index)
    {
        FreshSettings fresh = Volatile.Read(ref s_fresh)!;
        nint dirty = 0, muzzy = 0;
        nuint length = (nuint)sizeof(nint);
        if (MallctlClient.Native("arenas.dirty_decay_ms", &dirty, &length, null, 0) != 0 ||
            MallctlClient.Native("arenas.muzzy_decay_ms", &muzzy, &length, null, 0) != 0 ||
            MallctlClient.Native($"arena.{index}.dirty_decay_ms", null, null, &dirty, (nuint)sizeof(nint)) != 0 ||
            MallctlClient.Native($"arena.{index}.muzzy_decay_ms", null, null, &muzzy, (nuint)sizeof(nint)) != 0)
        {
            return false;
        }

        if (!WriteSize($"arena.{index}.oversize_threshold", fresh.OversizeThreshold) ||
            !WriteSize($"arena.{index}.retain_grow_limit", fresh.RetainGrowLimit))
        {
            return false;
        }

        // The default precedence is a string of jemalloc's own; it may be absent (built without dss).
        byte* dss = null;
        nuint pointerLength = (nuint)sizeof(nint);
        if (MallctlClient.Native($"arena.{MallctlKeys.AllArenas}.dss", &dss, &pointerLength, null, 0) == 0 && dss != null &&
            MallctlClient.Native($"arena.{index}.dss", null, null, &dss, (nuint)sizeof(nint)) != 0)
        {
            return false;
        }

        return true;
    }

    private static bool DestroyQuietly(ArenaAccount previous)
    {
        try
        {
            previous.DestroyArena();
            return true;
        }
        catch (MallctlException)
        {
            // A thread is bound to it after all: it stays, its account not gone, so it stays protected.
            return false;
        }
    }

    private static ArenaCounts ReadCounts(uint index)
    {
        ulong epoch = 1;
        if (MallctlClient.Native("epoch", null, null, &epoch, sizeof(ulong)) != 0)
        {
            return default; // Built without statistics: there are none to carry over.
        }

        return new ArenaCounts(
            ReadUInt64($"stats.arenas.{index}.small.nmalloc"),
            ReadUInt64($"stats.arenas.{index}.small.ndalloc"),
            ReadUInt64($"stats.arenas.{index}.large.nmalloc"),
            ReadUInt64($"stats.arenas.{index}.large.ndalloc"));
    }

    private static ulong ReadUInt64(string name)
    {
        ulong value = 0;
        nuint length = sizeof(ulong);
        return MallctlClient.Native(name, &value, &length, null, 0) == 0 ? value : 0;
    }

    private static nuint? ReadSize(string name)
    {
        nuint value = 0;
        nuint length = (nuint)sizeof(nuint);
        return MallctlClient.Native(name, &value, &length, null, 0) == 0 ? value : null;
    }

    // A setting the first arena did not have (retain_grow_limit without opt.retain) is not restored.
    private static bool WriteSize(string name, nuint? value)
    {
        if (value is not { } written)
        {
            return true;
        }

        return MallctlClient.Native(name, null, null, &written, (nuint)sizeof(nuint)) == 0;
    }

    private sealed record FreshSettings(nint ExtentHooks, nuint? OversizeThreshold, nuint? RetainGrowLimit);
}
