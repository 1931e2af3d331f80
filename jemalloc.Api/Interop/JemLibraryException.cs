namespace jemalloc;

/// <summary>
/// Thrown by the first jemalloc call when the native library cannot be found or loaded, or is a
/// jemalloc build without the <c>je_</c> prefix. The message says what was looked for, where, and
/// how to build the library.
/// </summary>
/// <remarks>It derives from <see cref="DllNotFoundException"/> so existing handlers still catch it.</remarks>
public sealed class JemLibraryException : DllNotFoundException
{
    private const string HowToBuild =
        "Reference the jemalloc.NET package, which ships it for linux-x64, linux-arm64 and win-x64 under runtimes/<rid>/native " +
        "(no other platform, macOS included, is supported), build it with ./build.sh native-all (on Linux x64) or build.cmd " +
        "(Windows x64, MSVC), or point to a build with the JEMALLOC_NET_LIBRARY environment variable or " +
        "Jem.SetNativeLibraryPath before the first call.";

    /// <summary>Creates the exception with a message.</summary>
    public JemLibraryException(string message) : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the error that caused it.</summary>
    public JemLibraryException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>Creates the exception with a default message.</summary>
    public JemLibraryException() : base("The native jemalloc library could not be loaded. " + HowToBuild)
    {
    }

    internal static JemLibraryException NotFound(IEnumerable<string> tried, string? reason) =>
        new($"The native jemalloc library ({Interop.NativeLibraryLoader.PlatformFileName}) could not be loaded" +
            (reason is null ? "" : $": {reason}") + ". Looked for: " + string.Join("; ", tried) + ". " + HowToBuild);

    internal static JemLibraryException NotPrefixed(string path, string symbol) =>
        new($"The library loaded from '{path}' is not a jemalloc built with the je_ prefix: it does not export '{symbol}'. " +
            "A system libjemalloc (unprefixed) cannot be used. " + HowToBuild);
}
