using System.Runtime.InteropServices;

namespace jemalloc.Tests.Support;

/// <summary>Whether the suite runs as a Windows program under wine (./build.sh test-win-x64).</summary>
internal static class Wine
{
    /// <summary>True under wine: its ntdll.dll exports <c>wine_get_version</c>, Windows' does not.</summary>
    public static bool IsRunningUnder { get; } = OperatingSystem.IsWindows()
        && NativeLibrary.TryLoad("ntdll.dll", out nint ntdll)
        && NativeLibrary.TryGetExport(ntdll, "wine_get_version", out _);
}
