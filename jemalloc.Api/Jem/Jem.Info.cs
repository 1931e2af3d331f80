using jemalloc.Interop;

namespace jemalloc;

public static partial class Jem
{
    /// <summary>The jemalloc version, e.g. <c>5.3.0-0-g54eaed1d…</c> (<c>version</c>).</summary>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static string Version => MallctlKeys.Version.Get() ?? string.Empty;

    /// <summary>jemalloc's page size in bytes (<c>arenas.page</c>).</summary>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static nuint PageSize => MallctlKeys.Arenas.Page.Get();

    /// <summary>The current number of arenas, automatic and created (<c>arenas.narenas</c>).</summary>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static uint ArenaCount => MallctlKeys.Arenas.Narenas.Get();

    /// <summary>The file the native library was loaded from, or null before it loaded (or when only the .NET host knows).</summary>
    public static string? NativeLibraryPath => NativeLibraryLoader.LoadedPath;

    /// <summary>How the loaded jemalloc was compiled (<c>config.*</c>).</summary>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static JemBuildConfiguration BuildConfiguration => new(
        MallctlKeys.Config.Debug.Get(),
        MallctlKeys.Config.Stats.Get(),
        MallctlKeys.Config.Prof.Get(),
        MallctlKeys.Config.Fill.Get(),
        MallctlKeys.Config.LazyLock.Get(),
        MallctlKeys.Config.Utrace.Get(),
        MallctlKeys.Config.Xmalloc.Get(),
        MallctlKeys.Config.MallocConf.Get() ?? string.Empty);
}
