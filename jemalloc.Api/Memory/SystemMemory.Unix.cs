using jemalloc.Interop;

namespace jemalloc;

internal static partial class SystemMemory
{
    // The cgroup a process is in does not change under it in practice: found once.
    private static LinuxMemoryLimits.CgroupLocation? s_cgroup;

    private static unsafe MemoryAvailability? QueryLinux()
    {
        LinuxMemoryLimits.CgroupLocation cgroup = s_cgroup ??= LinuxMemoryLimits.FindCgroup(ReadProcFile("/proc/self/cgroup"), ReadProcFile("/proc/self/mountinfo"));
        return LinuxMemoryLimits.Compute(ReadProcFile, cgroup, SoftLimit(Libc.RlimitAs), SoftLimit(Libc.RlimitData));
    }

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
