using System.Runtime.InteropServices;

namespace jemalloc.Interop;

internal static unsafe partial class VirtualMemory
{
    private const int ProtNone = 0;
    private const int ProtReadWrite = 0x1 | 0x2;
    private const int MapPrivate = 0x02;
    private const int MapAnonymous = 0x20;
    private const int MapNoReserve = 0x4000;
    private static readonly void* MapFailed = (void*)-1;

    private static void* ReserveLinux(nuint bytes)
    {
        // PROT_NONE and MAP_NORESERVE: no commit charge, whatever the overcommit policy.
        void* address = Mmap(null, bytes, ProtNone, MapPrivate | MapAnonymous | MapNoReserve, -1, 0);
        return address == MapFailed ? null : address;
    }

    private static bool CommitLinux(void* address, nuint bytes) => Mprotect(address, bytes, ProtReadWrite) == 0;

    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    private static partial void* Mmap(void* address, nuint length, int protection, int flags, int fd, nint offset);

    [LibraryImport("libc", EntryPoint = "mprotect", SetLastError = true)]
    private static partial int Mprotect(void* address, nuint length, int protection);
}
