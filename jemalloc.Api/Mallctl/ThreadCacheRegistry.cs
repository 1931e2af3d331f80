namespace jemalloc.Mallctl;

/// <summary>
/// The explicit thread caches (<c>tcache.create</c>) made through this library, and by whom:
/// jemalloc indexes its cache table with the id given to <c>tcache.flush</c>/<c>tcache.destroy</c>
/// and <c>MALLOCX_TCACHE</c> without checking it, so an id it never handed out (or one destroyed
/// already) corrupts its free list or reads out of bounds. Only ids recorded here may be used.
/// </summary>
internal static class ThreadCacheRegistry
{
    private const int None = 0;
    private const int User = 1;
    private const int Library = 2;

    // MALLOCX_TCACHE keeps (id + 2) in 12 bits: 4096 entries cover every id jemalloc can hand out.
    private static readonly int[] Owners = new int[1 << 12];

    /// <summary>Records an id the user created through the public mallctl API.</summary>
    internal static void AddUser(uint id) => Set(id, User);

    /// <summary>Records an id the library created for its own use (a <see cref="JemArena"/>'s per-thread caches).</summary>
    internal static void AddLibrary(uint id) => Set(id, Library);

    /// <summary>Forgets a library id that was destroyed.</summary>
    internal static void RemoveLibrary(uint id)
    {
        if (id < (uint)Owners.Length)
        {
            _ = Interlocked.CompareExchange(ref Owners[id], None, Library);
        }
    }

    /// <summary>Whether <paramref name="id"/> is a live cache the user created through the library.</summary>
    internal static bool IsUser(uint id) => id < (uint)Owners.Length && Volatile.Read(ref Owners[id]) == User;

    /// <summary>Claims a user cache for destruction, so that two threads cannot destroy it twice.</summary>
    internal static bool TryRemoveUser(uint id) =>
        id < (uint)Owners.Length && Interlocked.CompareExchange(ref Owners[id], None, User) == User;

    /// <summary>Describes why <paramref name="id"/> cannot be used, for an exception message.</summary>
    internal static string DescribeRefusal(uint id) =>
        id < (uint)Owners.Length && Volatile.Read(ref Owners[id]) == Library
            ? $"Thread cache {id} belongs to a JemArena (it flushes and destroys its own caches)."
            : $"Thread cache {id} was not created through this library's tcache.create (MallctlKeys.Tcache.Create.Get()), or has been destroyed.";

    private static void Set(uint id, int owner)
    {
        if (id < (uint)Owners.Length)
        {
            Volatile.Write(ref Owners[id], owner);
        }
    }
}
