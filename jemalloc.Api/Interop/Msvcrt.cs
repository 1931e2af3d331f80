using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace jemalloc.Interop;

/// <summary>
/// The C runtime the shipped Windows build of jemalloc uses: the MinGW-w64 build (build.sh) imports
/// <c>msvcrt.dll</c>, and its <c>getenv</c> reads msvcrt's own copy of the environment.
/// </summary>
/// <remarks>
/// Each C runtime on Windows (msvcrt.dll, ucrtbase.dll, a static one) keeps a private copy of the
/// environment, made when it starts, and <c>getenv</c> reads only that copy. .NET's
/// <see cref="Environment.SetEnvironmentVariable(string, string)"/> changes the process's block
/// (<c>SetEnvironmentVariableW</c>) and no C runtime's copy, so it reaches jemalloc only if msvcrt.dll
/// happens to start after it. <c>_putenv_s</c> of msvcrt.dll sets msvcrt's copy and the process's block,
/// so the variable is seen whether or not msvcrt.dll is already loaded. A jemalloc built with MSVC
/// (build.cmd) reads the Universal C Runtime's copy instead: see <see cref="Ucrt"/>.
/// </remarks>
[SupportedOSPlatform("windows")]
internal static partial class Msvcrt
{
    /// <summary><c>_putenv_s</c> of msvcrt.dll: 0 on success, else an errno value.</summary>
    [LibraryImport("msvcrt.dll", EntryPoint = "_putenv_s", StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int PutEnv(string name, string value);
}
