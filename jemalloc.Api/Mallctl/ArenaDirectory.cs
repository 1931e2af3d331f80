namespace jemalloc.Mallctl;

/// <summary>
/// Which arena indices exist, for checking <c>MALLOCX_ARENA</c> flags: jemalloc creates an arena
/// silently for an index that names none, and reads past its arena table for one beyond it. An
/// index found to exist is remembered (arenas are never removed except by <c>arena.&lt;i&gt;.destroy</c>,
/// which every entry point reports through <see cref="Forget"/> before it runs); an index not found is
/// asked again each time.
/// </summary>
internal static class ArenaDirectory
{
    /// <summary>jemalloc's <c>MALLOCX_ARENA_LIMIT</c>: arena indices are below it.</summary>
    internal const uint Limit = MallocxFlags.ArenaLimit;

    private const int Unknown = 0;
    private const int Live = 1;
    private const int Destroyed = 2;

    // Per index: Unknown (ask jemalloc), Live, or Destroyed through one of the library's entry points
    // (jemalloc reuses such an index for the next arenas.create).
    private static readonly int[] Known = new int[Limit];
    private static uint s_automatic = uint.MaxValue;
    private static Func<bool>? s_destroySpare;

    /// <summary>Whether arena <paramref name="index"/> exists (or is an automatic arena jemalloc makes on first use).</summary>
    internal static bool Exists(uint index) =>
        index < Limit && (Volatile.Read(ref Known[index]) == Live || ExistsSlow(index));

    /// <summary>Records an arena just created (<c>arenas.create</c>).</summary>
    internal static void MarkCreated(uint index)
    {
        if (index < Limit)
        {
            Volatile.Write(ref Known[index], Live);
        }
    }

    /// <summary>Records an arena destroyed (<c>arena.&lt;i&gt;.destroy</c> succeeded): its index is free for reuse.</summary>
    internal static void MarkDestroyed(uint index)
    {
        if (index < Limit)
        {
            Volatile.Write(ref Known[index], Destroyed);
        }
    }

    /// <summary>
    /// Throws before <c>arenas.create</c> when jemalloc has no index left: at 4095 arenas with none
    /// destroyed, jemalloc 5.3 indexes its statistics table one past its end before it fails.
    /// </summary>
    /// <exception cref="MallctlException">No arena can be created.</exception>
    internal static unsafe void ThrowIfFull(string key)
    {
        uint narenas = 0;
        nuint length = sizeof(uint);
        if (MallctlClient.Native("arenas.narenas", &narenas, &length, null, 0) != 0 || narenas < Limit)
        {
            return;
        }

        // Arenas kept idle for the next JemArena are given up first.
        if (Array.IndexOf(Known, Destroyed) < 0 && !(Volatile.Read(ref s_destroySpare)?.Invoke() ?? false))
        {
            MallctlPolicy.ThrowRefused(key,
                $"jemalloc has {narenas} arenas, its limit, and none destroyed to reuse; dispose a JemArena (or destroy an arena made with arenas.create) first.");
        }
    }

    /// <summary>
    /// How the arena books, a later layer, destroy one arena they keep idle for reuse (returning whether
    /// they did), so that <see cref="ThrowIfFull"/> finds an index to reuse: registered as the first
    /// arena account is recorded, so before any arena is kept.
    /// </summary>
    internal static void RegisterSpareArenas(Func<bool> destroyOne) =>
        Volatile.Write(ref s_destroySpare, destroyOne);

    /// <summary>Forgets an arena about to be destroyed; call <see cref="MarkCreated"/> again if the destruction failed.</summary>
    internal static void Forget(uint index)
    {
        if (index < Limit)
        {
            Volatile.Write(ref Known[index], Unknown);
        }
    }

    private static unsafe bool ExistsSlow(uint index)
    {
        if (index < Automatic)
        {
            return true;
        }

        // Reading an arena's decay time fails (EFAULT, or ENOENT past arenas.narenas) exactly when no
        // arena has that index; arena.<i>.initialized would do, but only after an epoch refresh.
        nint decay = 0;
        nuint length = (nuint)sizeof(nint);
        bool exists = MallctlClient.Native($"arena.{index}.dirty_decay_ms", &decay, &length, null, 0) == 0;
        if (exists)
        {
            MarkCreated(index);
        }

        return exists;
    }

    // The automatic arenas (opt.narenas of them) exist for jemalloc even before their first use.
    private static uint Automatic
    {
        get
        {
            uint automatic = Volatile.Read(ref s_automatic);
            if (automatic == uint.MaxValue)
            {
                automatic = ReadAutomatic();
                Volatile.Write(ref s_automatic, automatic);
            }

            return automatic;
        }
    }

    private static unsafe uint ReadAutomatic()
    {
        uint narenas = 0;
        nuint length = sizeof(uint);
        return MallctlClient.Native("opt.narenas", &narenas, &length, null, 0) == 0 ? narenas : 1;
    }
}
