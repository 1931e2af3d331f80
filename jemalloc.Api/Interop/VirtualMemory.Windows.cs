using System.Runtime.InteropServices;

namespace jemalloc.Interop;

internal static unsafe partial class VirtualMemory
{
    private const uint MemCommit = 0x1000;
    private const uint MemReserve = 0x2000;
    private const uint PageNoAccess = 0x01;
    private const uint PageReadWrite = 0x04;

    private static void* ReserveWindows(nuint bytes) => VirtualAlloc(null, bytes, MemReserve, PageNoAccess);

    private static bool CommitWindows(void* address, nuint bytes) => VirtualAlloc(address, bytes, MemCommit, PageReadWrite) != null;

    [LibraryImport("kernel32.dll", EntryPoint = "VirtualAlloc", SetLastError = true)]
    private static partial void* VirtualAlloc(void* address, nuint size, uint allocationType, uint protection);
}
