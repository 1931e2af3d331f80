using System.Runtime.Versioning;

namespace jemalloc.Simd;

internal static partial class LastLevelCache
{
    private const string SysfsDirectory = "/sys/devices/system/cpu/cpu0/cache";

    // One index<N> directory per cache of cpu0 (level, type, size); the unified or data cache of the
    // highest level is the last level. Some VMs list none: then CPUID is asked.
    [SupportedOSPlatform("linux")]
    private static long? ReadLinux()
    {
        if (!Directory.Exists(SysfsDirectory))
        {
            return null;
        }

        long best = 0;
        int bestLevel = 0;
        foreach (string index in Directory.EnumerateDirectories(SysfsDirectory, "index*"))
        {
            string? type = ReadLine(Path.Combine(index, "type"));
            if (type is null || type.Equals("Instruction", StringComparison.OrdinalIgnoreCase)
                || !int.TryParse(ReadLine(Path.Combine(index, "level")), out int level)
                || ParseSysfsSize(ReadLine(Path.Combine(index, "size"))) is not long size)
            {
                continue;
            }

            if (level > bestLevel || (level == bestLevel && size > best))
            {
                (bestLevel, best) = (level, size);
            }
        }

        return best > 0 ? best : null;
    }

    private static string? ReadLine(string path) => File.Exists(path) ? File.ReadAllText(path).Trim() : null;
}
