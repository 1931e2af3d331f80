using jemalloc.Mallctl;

namespace jemalloc.ArenaBooks;

/// <summary>
/// One explicit jemalloc thread cache (<c>tcache.create</c>) per thread for one arena, so that
/// small allocations and frees in a <see cref="JemArena"/> take jemalloc's lock-free fast path, yet
/// stay safe to reset: an explicit cache is only ever used by its own thread, is dedicated to this
/// arena, and every one of them can be flushed by whoever holds the arena's gate closed.
/// </summary>
/// <remarks>Every member except <see cref="FlagsFor"/> must be called with the arena's gate closed; <see cref="FlagsFor"/> inside it.</remarks>
internal sealed class ArenaThreadCaches : IDisposable
{
    private const int TcacheMask = 0xFFF00;
    private const int NotCreated = 0;
    private const int Unavailable = -1;

    // Per thread: 0 = no cache yet, -1 = jemalloc could not create one (allocate without), else index + 1.
    private readonly ThreadLocal<int> _caches = new(trackAllValues: true);

    /// <summary>The arena's flags with the calling thread's cache instead of none (or unchanged if there can be none).</summary>
    internal int FlagsFor(int flags)
    {
        int cache = _caches.Value;
        if (cache == NotCreated)
        {
            cache = Create();
            _caches.Value = cache;
        }

        return cache == Unavailable ? flags : (flags & ~TcacheMask) | MallocxFlags.ThreadCache((uint)(cache - 1)).Value;
    }

    /// <summary>Returns every cached object to the arena (<c>tcache.flush</c>), as a reset requires.</summary>
    internal void FlushAll()
    {
        foreach (int cache in _caches.Values)
        {
            if (cache > 0)
            {
                MallctlClient.WriteNative("tcache.flush", (uint)(cache - 1));
            }
        }
    }

    /// <summary>Flushes and destroys every cache (<c>tcache.destroy</c>); the arena is being destroyed.</summary>
    public void Dispose()
    {
        foreach (int cache in _caches.Values)
        {
            if (cache > 0)
            {
                ThreadCacheRegistry.RemoveLibrary((uint)(cache - 1));
                MallctlClient.WriteNative("tcache.destroy", (uint)(cache - 1));
            }
        }

        _caches.Dispose();
    }

    private static int Create()
    {
        // jemalloc has a few thousand explicit caches in all; past that the thread allocates without one.
        uint index = 0;
        nuint length = sizeof(uint);
        unsafe
        {
            if (MallctlClient.Native("tcache.create", &index, &length, null, 0) != 0 || index > 4093)
            {
                return Unavailable;
            }
        }

        // Recorded as the library's, so that no public mallctl call can flush or destroy it under the arena.
        ThreadCacheRegistry.AddLibrary(index);
        return (int)index + 1;
    }
}
