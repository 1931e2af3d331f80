using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>The C library calls the memory checks use: resource limits and positioned reads of <c>/proc/self/pagemap</c>.</summary>
internal static unsafe partial class Libc
{
    /// <summary><c>RLIMIT_DATA</c> on Linux (x64 and arm64).</summary>
    internal const int RlimitData = 2;

    /// <summary><c>RLIMIT_AS</c> on Linux (x64 and arm64).</summary>
    internal const int RlimitAs = 9;

    /// <summary><c>RLIM_INFINITY</c> on 64-bit Linux.</summary>
    internal const ulong RlimInfinity = ulong.MaxValue;

    /// <summary><c>O_RDONLY | O_CLOEXEC</c> on Linux.</summary>
    internal const int OpenReadOnlyCloseOnExec = 0x80000;

    /// <summary>Reads a resource limit into two 64-bit words: the soft limit, then the hard limit.</summary>
    [LibraryImport(LibraryName, EntryPoint = "getrlimit", SetLastError = true)]
    internal static partial int GetRlimit(int resource, ulong* limits);

    [LibraryImport(LibraryName, EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8, SetLastError = true)]
    internal static partial int Open(string path, int flags);

    /// <summary>Reads at an offset without moving the file position, so threads may share the descriptor.</summary>
    [LibraryImport(LibraryName, EntryPoint = "pread", SetLastError = true)]
    internal static partial nint Pread(int fd, void* buffer, nuint count, long offset);

    [LibraryImport(LibraryName, EntryPoint = "close", SetLastError = true)]
    internal static partial int Close(int fd);
}
