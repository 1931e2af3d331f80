using System.Runtime.Versioning;
using jemalloc.Interop;

namespace jemalloc.Memory;

internal static partial class SystemMemory
{
    // The cgroup a process is in does not change under it in practice: found once.
    private static LinuxMemoryLimits.CgroupLocation? s_cgroup;
    private static Func<string, string?> s_fileReader = ReadProcFile;

    /// <summary>
    /// Reads <c>/proc</c> and cgroup files (null for a file that cannot be read). Tests replace it to
    /// make the process look smaller than it is; setting it forgets the cgroup found and any cached reading.
    /// </summary>
    internal static Func<string, string?> FileReader
    {
        get => s_fileReader;
        set
        {
            s_fileReader = value ?? ReadProcFile;
            s_cgroup = null;
            lock (CacheGate)
            {
                s_cachedBytes = 0;
                s_cachedAt = long.MinValue;
            }
        }
    }

    [SupportedOSPlatform("linux")]
    private static unsafe MemoryAvailability? QueryLinux()
    {
        Func<string, string?> read = s_fileReader;
        LinuxMemoryLimits.CgroupLocation cgroup = s_cgroup ??= LinuxMemoryLimits.FindCgroup(read("/proc/self/cgroup"), read("/proc/self/mountinfo"));
        return LinuxMemoryLimits.Compute(read, cgroup, SoftLimit(Libc.RlimitAs), SoftLimit(Libc.RlimitData));
    }

    [SupportedOSPlatform("linux")]
    private static unsafe ulong SoftLimit(int resource)
    {
        ulong* limits = stackalloc ulong[2];
        return Libc.GetRlimit(resource, limits) == 0 ? limits[0] : Libc.RlimInfinity;
    }

    // Missing files (no cgroup, no swap accounting) are normal: null, never an exception.
    private static string? ReadProcFile(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
