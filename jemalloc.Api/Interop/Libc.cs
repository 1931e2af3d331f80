using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace jemalloc.Interop;

/// <summary>
/// The few C library functions of Unix the managed runtime has no equivalent for. They do not exist on
/// Windows: the platform attributes make the compiler (CA1416) demand an OS check at every call.
/// </summary>
[SupportedOSPlatform("linux")]
[SupportedOSPlatform("macos")]
internal static partial class Libc
{
    private const string LibraryName = "libc";

    /// <summary>
    /// Sets a variable in the process's native environment. On Unix, .NET's
    /// <see cref="Environment.SetEnvironmentVariable(string, string)"/> keeps its own copy and
    /// never reaches <c>getenv</c>, which is what jemalloc's constructor reads.
    /// </summary>
    [LibraryImport(LibraryName, EntryPoint = "setenv", StringMarshalling = StringMarshalling.Utf8, SetLastError = true)]
    internal static partial int SetEnv(string name, string value, int overwrite);

    [LibraryImport(LibraryName, EntryPoint = "madvise", SetLastError = true)]
    internal static partial int Madvise(nint address, nuint length, int advice);

    /// <summary><c>MADV_HUGEPAGE</c> on Linux.</summary>
    internal const int MadvHugePage = 14;

    /// <summary><c>MADV_NOHUGEPAGE</c> on Linux.</summary>
    internal const int MadvNoHugePage = 15;

    /// <summary><c>MADV_DONTNEED</c> on Linux: private anonymous pages are dropped and read as zero, freshly faulted, on their next touch.</summary>
    internal const int MadvDontNeed = 4;
}
