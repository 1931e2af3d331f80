
using jemalloc.Mallctl;

namespace jemalloc;

/// <summary>
/// Typed access to what jemalloc lets a program change while it runs: decay times (per arena and
/// the default for new arenas), background purging threads, purging now, the calling thread's cache
/// and arena. Everything else is fixed at start-up: choose it with a conf string (see
/// <see cref="TuningPresets"/>).
/// </summary>
/// <remarks>
/// Decay times are in milliseconds: how long unused pages are kept for reuse before they are given
/// back to the OS; -1 keeps them for ever, 0 gives them back at once. "Dirty" pages still hold data;
/// "muzzy" pages were released lazily (<c>MADV_FREE</c>) and the OS may take them back at any time.
/// </remarks>
public static class JemTuning
{
    /// <summary>
    /// Whether jemalloc's background threads purge unused memory (<c>background_thread</c>), so that
    /// allocating threads do not. Switching it on starts the threads.
    /// </summary>
    /// <exception cref="MallctlException">The threads could not be started or stopped; or, with
    /// <see cref="MallctlError.NotFound"/>, this jemalloc has no background threads (the Windows build).</exception>
    public static bool BackgroundThread
    {
        get => MallctlKeys.BackgroundThread.Get();
        set => MallctlKeys.BackgroundThread.Set(value);
    }

    /// <summary>The most background threads jemalloc may run (<c>max_background_threads</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is zero.</exception>
    /// <exception cref="MallctlException">jemalloc refused the value (e.g. more than the number of CPUs allows); or,
    /// with <see cref="MallctlError.NotFound"/>, this jemalloc has no background threads (the Windows build).</exception>
    public static int MaxBackgroundThreads
    {
        get => (int)MallctlKeys.MaxBackgroundThreads.Get();
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            MallctlKeys.MaxBackgroundThreads.Set((nuint)value);
        }
    }

    /// <summary>The dirty decay time given to arenas created from now on (<c>arenas.dirty_decay_ms</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    public static long DefaultDirtyDecayMilliseconds
    {
        get => MallctlKeys.Arenas.DirtyDecayMs.Get();
        set => MallctlKeys.Arenas.DirtyDecayMs.Set(CheckDecay(value));
    }

    /// <summary>The muzzy decay time given to arenas created from now on (<c>arenas.muzzy_decay_ms</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    public static long DefaultMuzzyDecayMilliseconds
    {
        get => MallctlKeys.Arenas.MuzzyDecayMs.Get();
        set => MallctlKeys.Arenas.MuzzyDecayMs.Set(CheckDecay(value));
    }

    /// <summary>The number of arena indices in use, automatic and created (<c>arenas.narenas</c>).</summary>
    public static uint ArenaCount => MallctlKeys.Arenas.Narenas.Get();

    /// <summary>
    /// The arena the calling thread allocates in when no arena is named (<c>thread.arena</c>).
    /// Setting it moves the thread (and its thread cache) to another arena. An arena made with
    /// <c>arenas.create</c> that a thread was moved onto can no longer be reset or destroyed through
    /// mallctl: the thread's default allocations there cannot be told apart from the rest.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The arena index is not below <see cref="ArenaCount"/>.</exception>
    /// <exception cref="InvalidOperationException">
    /// The arena belongs to a <see cref="JemArena"/>: its reset frees memory all at once, which a
    /// thread's cached default allocations must never be part of.
    /// </exception>
    /// <exception cref="MallctlException">The arena does not exist (e.g. it was destroyed).</exception>
    public static uint ThreadArena
    {
        get => MallctlKeys.Thread.Arena.Get();
        set
        {
            ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(value, ArenaCount);
            if (ThreadArenaGuard.Refusal(value) is { } refusal)
            {
                throw new InvalidOperationException(refusal);
            }

            MallctlKeys.Thread.Arena.Set(value);
        }
    }

    /// <summary>Whether the calling thread has a thread cache (<c>thread.tcache.enabled</c>).</summary>
    public static bool ThreadCacheEnabled
    {
        get => MallctlKeys.Thread.TcacheEnabled.Get();
        set => MallctlKeys.Thread.TcacheEnabled.Set(value);
    }

    /// <summary>Returns the calling thread's cached free memory to its arenas (<c>thread.tcache.flush</c>).</summary>
    /// <exception cref="InvalidOperationException">
    /// The calling thread has no thread cache to flush: <see cref="ThreadCacheEnabled"/> is false for it, or jemalloc
    /// was started with <c>tcache:false</c>.
    /// </exception>
    public static void FlushThreadCache()
    {
        try
        {
            MallctlKeys.Thread.TcacheFlush.Run();
        }
        catch (MallctlException exception) when (exception.Error == MallctlError.Fault)
        {
            // jemalloc answers EFAULT exactly when the thread has no cache (tcache_available is false).
            throw new InvalidOperationException(
                "The calling thread has no thread cache to flush: ThreadCacheEnabled is false for this thread (or jemalloc was started with tcache:false). Set JemTuning.ThreadCacheEnabled = true first, or skip the flush.",
                exception);
        }
    }

    /// <summary>Reads an arena's dirty decay time (<c>arena.&lt;i&gt;.dirty_decay_ms</c>).</summary>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static long GetDirtyDecayMilliseconds(uint arena) => MallctlKeys.Arena(arena).DirtyDecayMs.Get();

    /// <summary>Sets an arena's dirty decay time (<c>arena.&lt;i&gt;.dirty_decay_ms</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="milliseconds"/> is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static void SetDirtyDecayMilliseconds(uint arena, long milliseconds) =>
        MallctlKeys.Arena(arena).DirtyDecayMs.Set(CheckDecay(milliseconds));

    /// <summary>Reads an arena's muzzy decay time (<c>arena.&lt;i&gt;.muzzy_decay_ms</c>).</summary>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static long GetMuzzyDecayMilliseconds(uint arena) => MallctlKeys.Arena(arena).MuzzyDecayMs.Get();

    /// <summary>Sets an arena's muzzy decay time (<c>arena.&lt;i&gt;.muzzy_decay_ms</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="milliseconds"/> is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static void SetMuzzyDecayMilliseconds(uint arena, long milliseconds) =>
        MallctlKeys.Arena(arena).MuzzyDecayMs.Set(CheckDecay(milliseconds));

    /// <summary>
    /// Sets the decay times of every existing arena and the default for new ones. A null value
    /// leaves that setting alone.
    /// </summary>
    /// <returns>The number of arenas changed.</returns>
    /// <exception cref="ArgumentOutOfRangeException">A value is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit); nothing was changed.</exception>
    public static int SetDecayForAllArenas(long? dirtyMilliseconds, long? muzzyMilliseconds)
    {
        nint? dirty = dirtyMilliseconds is { } d ? CheckDecay(d, nameof(dirtyMilliseconds)) : null;
        nint? muzzy = muzzyMilliseconds is { } m ? CheckDecay(m, nameof(muzzyMilliseconds)) : null;
        if (dirty is { } defaultDirty)
        {
            MallctlKeys.Arenas.DirtyDecayMs.Set(defaultDirty);
        }

        if (muzzy is { } defaultMuzzy)
        {
            MallctlKeys.Arenas.MuzzyDecayMs.Set(defaultMuzzy);
        }

        // arena.<i>.initialized is refreshed with the statistics: arenas created since the last refresh read false.
        MallctlKeys.Epoch.Set(1);
        int changed = 0;
        uint count = ArenaCount;
        for (uint arena = 0; arena < count; arena++)
        {
            ArenaKeys keys = MallctlKeys.Arena(arena);
            // Indices can be unused (never initialized, or destroyed and not yet reused).
            if (!keys.Initialized.Get())
            {
                continue;
            }

            if (dirty is { } arenaDirty)
            {
                keys.DirtyDecayMs.Set(arenaDirty);
            }

            if (muzzy is { } arenaMuzzy)
            {
                keys.MuzzyDecayMs.Set(arenaMuzzy);
            }

            changed++;
        }

        return changed;
    }

    /// <summary>Gives an arena's unused dirty pages back to the OS now (<c>arena.&lt;i&gt;.purge</c>).</summary>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static void Purge(uint arena) => MallctlKeys.Arena(arena).Purge.Run();

    /// <summary>Gives every arena's unused dirty pages back to the OS now.</summary>
    public static void PurgeAll() => MallctlKeys.Arena(MallctlKeys.AllArenas).Purge.Run();

    /// <summary>Purges what an arena's decay times say is due now (<c>arena.&lt;i&gt;.decay</c>).</summary>
    /// <exception cref="MallctlException">The arena does not exist.</exception>
    public static void Decay(uint arena) => MallctlKeys.Arena(arena).Decay.Run();

    /// <summary>Purges what every arena's decay times say is due now.</summary>
    public static void DecayAll() => MallctlKeys.Arena(MallctlKeys.AllArenas).Decay.Run();

    private static nint CheckDecay(long milliseconds, [System.Runtime.CompilerServices.CallerArgumentExpression(nameof(milliseconds))] string name = "value") =>
        DecayTime.Check(milliseconds, name);
}
