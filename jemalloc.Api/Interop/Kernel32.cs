using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>The Windows system calls the memory checks and the cache-size reading use.</summary>
internal static unsafe partial class Kernel32
{
    /// <summary>Fills <paramref name="status"/> (whose <see cref="MemoryStatusEx.Length"/> must be set); nonzero on success.</summary>
    [LibraryImport("kernel32.dll", EntryPoint = "GlobalMemoryStatusEx", SetLastError = true)]
    internal static partial int GlobalMemoryStatusEx(MemoryStatusEx* status);

    /// <summary>
    /// Fills <paramref name="buffer"/> with the processor records of one relationship kind; nonzero on
    /// success. With too small a buffer it fails and sets <paramref name="length"/> to the size needed.
    /// </summary>
    [LibraryImport("kernel32.dll", EntryPoint = "GetLogicalProcessorInformationEx", SetLastError = true)]
    internal static partial int GetLogicalProcessorInformationEx(int relationship, byte* buffer, uint* length);
}
