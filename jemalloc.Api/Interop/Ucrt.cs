using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace jemalloc.Interop;

/// <summary>
/// The Universal C Runtime (ucrtbase.dll, part of every Windows that .NET 10 runs on), which a
/// jemalloc built with MSVC by build.cmd links: its <c>getenv</c> reads the UCRT's own copy of the
/// environment, which neither msvcrt.dll's <c>_putenv_s</c> nor .NET's environment reaches.
/// </summary>
[SupportedOSPlatform("windows")]
internal static partial class Ucrt
{
    /// <summary><c>_putenv_s</c> of ucrtbase.dll: 0 on success, else an errno value.</summary>
    [LibraryImport("ucrtbase.dll", EntryPoint = "_putenv_s", StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int PutEnv(string name, string value);
}
