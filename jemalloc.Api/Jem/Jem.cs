using jemalloc.Interop;

namespace jemalloc;

/// <summary>
/// The low-level jemalloc API: every native function, typed <c>mallctl</c> access, statistics,
/// configuration and messages. Pointers from these methods must be freed by jemalloc
/// (<see cref="Free"/>, <see cref="Dallocx(void*, MallocxFlags)"/>, <see cref="Sdallocx(void*, nuint, MallocxFlags)"/>), never by another allocator.
/// </summary>
public static unsafe partial class Jem
{
    /// <summary>
    /// Names the native library file to load instead of the bundled one. Must be called before the
    /// first jemalloc call; the <c>JEMALLOC_NET_LIBRARY</c> environment variable does the same.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">The library is already loaded.</exception>
    public static void SetNativeLibraryPath(string path)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        NativeLibraryLoader.SetExplicitPath(path);
    }

    /// <summary>Whether the native library has been loaded (by the first jemalloc call).</summary>
    public static bool IsLoaded => NativeLibraryLoader.IsLoaded;

    /// <summary>
    /// Loads the native library now, if it is not loaded yet, and returns the path it was loaded from
    /// (or its file name, when the .NET host found it).
    /// </summary>
    /// <exception cref="JemLibraryException">The library is missing or is not a <c>je_</c>-prefixed build.</exception>
    public static string Load()
    {
        NativeLibraryLoader.Register();
        NativeLibraryLoader.EnsureLoaded();
        return NativeLibraryLoader.LoadedPath ?? NativeLibraryLoader.PlatformFileName;
    }
}
