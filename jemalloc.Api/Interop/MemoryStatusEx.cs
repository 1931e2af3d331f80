using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>Windows' <c>MEMORYSTATUSEX</c>, filled by <see cref="Kernel32.GlobalMemoryStatusEx"/>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct MemoryStatusEx
{
    /// <summary>The size of this structure; must be set before the call.</summary>
    public uint Length;
    public uint MemoryLoad;
    public ulong TotalPhys;
    public ulong AvailPhys;
    public ulong TotalPageFile;

    /// <summary>How much more the process can commit: the system commit limit minus the commit charge (or the job's limit).</summary>
    public ulong AvailPageFile;
    public ulong TotalVirtual;
    public ulong AvailVirtual;
    public ulong AvailExtendedVirtual;
}
