using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>The few C library functions the managed runtime has no equivalent for.</summary>
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

    /// <summary>
    /// Sets a variable in the Universal C Runtime's environment on Windows (and the process's). jemalloc's
    /// <c>getenv</c> reads the C runtime's copy, which <see cref="Environment.SetEnvironmentVariable(string, string)"/>
    /// does not update.
    /// </summary>
    [LibraryImport("ucrtbase.dll", EntryPoint = "_putenv_s", StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int PutEnvWindows(string name, string value);

    [LibraryImport(LibraryName, EntryPoint = "madvise", SetLastError = true)]
    internal static partial int Madvise(nint address, nuint length, int advice);

    /// <summary><c>MADV_HUGEPAGE</c> on Linux.</summary>
    internal const int MadvHugePage = 14;
}
