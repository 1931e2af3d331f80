using System.Reflection;
using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>
/// Finds and loads the native jemalloc library the first time any jemalloc function is called,
/// and checks that it really is a <c>je_</c>-prefixed build.
/// </summary>
/// <remarks>
/// Search order: the path given to <see cref="Jem.SetNativeLibraryPath(string)"/>; the
/// <see cref="PathVariable"/> environment variable; the .NET host's native probing (a package's
/// <c>runtimes/&lt;rid&gt;/native</c> folder, the application folder); then the application's and
/// this assembly's folders, including their <c>runtimes/&lt;rid&gt;/native</c>.
/// The library is never unloaded: jemalloc does not support <c>dlclose</c>.
/// </remarks>
internal static class NativeLibraryLoader
{
    /// <summary>The environment variable that names a native library to load instead of the bundled one.</summary>
    internal const string PathVariable = "JEMALLOC_NET_LIBRARY";

    /// <summary>A function every prefixed build exports and an unprefixed one does not.</summary>
    private const string ProbeSymbol = "je_mallocx";

    /// <summary>The environment variable a <c>je_</c>-prefixed jemalloc reads its options from.</summary>
    internal const string ConfigurationVariable = "JE_MALLOC_CONF";

    private static readonly Lock Gate = new();
    private static Action<nint>? s_loaded;
    private static string? s_requestedConfiguration;
    private static string? s_explicitPath;
    private static nint s_handle;
    private static string? s_loadedPath;
    private static int s_registered;

    /// <summary>The handle of the loaded library, or zero before the first call.</summary>
    internal static nint Handle => Volatile.Read(ref s_handle);

    /// <summary>Whether the library has been loaded (and so read its configuration).</summary>
    internal static bool IsLoaded => Handle != 0;

    /// <summary>The file the library was loaded from, when known.</summary>
    internal static string? LoadedPath => s_loadedPath;

    /// <summary>The platform's file name for the library, e.g. <c>libjemallocnet.so</c>.</summary>
    internal static string PlatformFileName =>
        OperatingSystem.IsWindows() ? "jemallocnet.dll" :
        OperatingSystem.IsMacOS() ? "libjemallocnet.dylib" : "libjemallocnet.so";

    internal static void Register()
    {
        if (Interlocked.Exchange(ref s_registered, 1) == 0)
        {
            NativeLibrary.SetDllImportResolver(typeof(NativeLibraryLoader).Assembly, Resolve);
        }
    }

    internal static void SetExplicitPath(string path)
    {
        lock (Gate)
        {
            if (IsLoaded)
            {
                throw new InvalidOperationException(
                    $"The native jemalloc library is already loaded from '{s_loadedPath}'; " +
                    "Jem.SetNativeLibraryPath must be called before the first jemalloc call.");
            }

            s_explicitPath = Path.GetFullPath(path);
        }
    }

    /// <summary>The configuration passed to <see cref="Jem.Init(string)"/>, if any.</summary>
    internal static string? RequestedConfiguration => Volatile.Read(ref s_requestedConfiguration);

    /// <summary>
    /// Puts <paramref name="configuration"/> where jemalloc reads it while loading: the native
    /// environment (on Unix .NET keeps a private copy of the environment that getenv never sees; on
    /// Windows jemalloc reads msvcrt.dll's copy).
    /// </summary>
    internal static void SetConfiguration(string configuration)
    {
        lock (Gate)
        {
            if (IsLoaded)
            {
                throw new InvalidOperationException(
                    $"jemalloc is already loaded (from '{s_loadedPath ?? PlatformFileName}') and has read its options; " +
                    "Jem.Init must be called before the first jemalloc call (or set JE_MALLOC_CONF before the process starts).");
            }

            if (OperatingSystem.IsWindows())
            {
                // The shipped (MinGW-built) jemallocnet.dll reads msvcrt.dll's copy of the environment, one
                // built with MSVC by build.cmd the UCRT's (see Msvcrt): both are set, so either build sees it.
                int error = Msvcrt.PutEnv(ConfigurationVariable, configuration);
                if (error != 0)
                {
                    throw new InvalidOperationException($"msvcrt.dll _putenv_s({ConfigurationVariable}) failed with error {error}.");
                }

                error = Ucrt.PutEnv(ConfigurationVariable, configuration);
                if (error != 0)
                {
                    throw new InvalidOperationException($"ucrtbase.dll _putenv_s({ConfigurationVariable}) failed with error {error}.");
                }
            }
            else if (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS())
            {
                if (Libc.SetEnv(ConfigurationVariable, configuration, 1) != 0)
                {
                    throw new InvalidOperationException(
                        $"setenv({ConfigurationVariable}) failed with errno {Marshal.GetLastPInvokeError()}.");
                }
            }
            else
            {
                throw new PlatformNotSupportedException("jemalloc.NET runs on Linux and Windows.");
            }

            Volatile.Write(ref s_requestedConfiguration, configuration);
        }
    }

    /// <summary>
    /// Sets the one callback run right after the library loads, with its handle: how a later layer (the
    /// <see cref="Jem"/> facade's message hook) acts on the load without the loader knowing it. Returns
    /// the handle if the library is loaded already, so the caller acts at once; the callback may then
    /// run as well, so it must bear running twice.
    /// </summary>
    internal static nint WhenLoaded(Action<nint> callback)
    {
        Interlocked.Exchange(ref s_loaded, callback);
        return Interlocked.CompareExchange(ref s_handle, 0, 0);
    }

    /// <summary>Loads the library now (if it is not yet), throwing <see cref="JemLibraryException"/> on failure.</summary>
    internal static nint EnsureLoaded() => IsLoaded ? Handle : Load(typeof(NativeLibraryLoader).Assembly, null);

    private static nint Resolve(string libraryName, Assembly assembly, DllImportSearchPath? searchPath) =>
        libraryName == JemNative.LibraryName ? Load(assembly, searchPath) : 0;

    private static nint Load(Assembly assembly, DllImportSearchPath? searchPath)
    {
        lock (Gate)
        {
            if (s_handle != 0)
            {
                return s_handle;
            }

            var tried = new List<string>();
            string? chosen = s_explicitPath ?? NonEmpty(Environment.GetEnvironmentVariable(PathVariable));
            nint handle;
            string? loadedFrom;
            if (chosen is not null)
            {
                tried.Add(chosen);
                if (!File.Exists(chosen))
                {
                    throw JemLibraryException.NotFound(tried, $"the file named by {(s_explicitPath is null ? PathVariable : "Jem.SetNativeLibraryPath")} does not exist");
                }

                if (!NativeLibrary.TryLoad(chosen, out handle))
                {
                    throw JemLibraryException.NotFound(tried, "the file exists but could not be loaded (wrong architecture or missing dependencies?)");
                }

                loadedFrom = chosen;
            }
            else if (!TryLoadFromDefaultLocations(assembly, searchPath, tried, out handle, out loadedFrom))
            {
                throw JemLibraryException.NotFound(tried, null);
            }

            if (!NativeLibrary.TryGetExport(handle, ProbeSymbol, out _))
            {
                // Deliberately not freed: unloading a jemalloc that may already serve allocations is unsafe.
                throw JemLibraryException.NotPrefixed(loadedFrom ?? "(unknown)", ProbeSymbol);
            }

            s_loadedPath = loadedFrom;
            // Full fences on both sides (here and in WhenLoaded): a callback registered while the library
            // loads sees the handle, or is seen here, or both (the callback must bear running twice).
            Interlocked.Exchange(ref s_handle, handle);
            Volatile.Read(ref s_loaded)?.Invoke(handle);
            return handle;
        }
    }

    private static bool TryLoadFromDefaultLocations(Assembly assembly, DllImportSearchPath? searchPath, List<string> tried, out nint handle, out string? loadedFrom)
    {
        tried.Add($"'{JemNative.LibraryName}' through the .NET host's native probing (package runtimes/ folders, application folder)");
        if (NativeLibrary.TryLoad(JemNative.LibraryName, assembly, searchPath ?? (DllImportSearchPath.AssemblyDirectory | DllImportSearchPath.SafeDirectories), out handle))
        {
            loadedFrom = null;
            return true;
        }

        string rid = RuntimeInformation.RuntimeIdentifier;
        string portableRid = $"{(OperatingSystem.IsWindows() ? "win" : OperatingSystem.IsMacOS() ? "osx" : "linux")}-{RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant()}";
        foreach (string folder in new[] { AppContext.BaseDirectory })
        {
            foreach (string candidate in new[]
            {
                Path.Combine(folder, PlatformFileName),
                Path.Combine(folder, "runtimes", portableRid, "native", PlatformFileName),
                Path.Combine(folder, "runtimes", rid, "native", PlatformFileName),
            }.Distinct())
            {
                tried.Add(candidate);
                if (File.Exists(candidate) && NativeLibrary.TryLoad(candidate, out handle))
                {
                    loadedFrom = candidate;
                    return true;
                }
            }
        }

        loadedFrom = null;
        return false;
    }

    private static string? NonEmpty(string? value) => string.IsNullOrWhiteSpace(value) ? null : value;
}
