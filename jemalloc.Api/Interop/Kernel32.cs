using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>The Windows system calls the memory checks use.</summary>
internal static unsafe partial class Kernel32
{
    /// <summary>Fills <paramref name="status"/> (whose <see cref="MemoryStatusEx.Length"/> must be set); nonzero on success.</summary>
    [LibraryImport("kernel32.dll", EntryPoint = "GlobalMemoryStatusEx", SetLastError = true)]
    internal static partial int GlobalMemoryStatusEx(MemoryStatusEx* status);
}
