using System.Globalization;
using System.Text;

namespace jemalloc.Memory;

/// <summary>
/// Works out how much memory a Linux process can still get from the text of <c>/proc</c> and cgroup
/// files, read through a function so the arithmetic can be tested on made-up files:
/// <c>min(MemAvailable, cgroup memory room) + min(SwapFree, cgroup swap room)</c>, further capped by
/// a cgroup v1 memory+swap room and by <c>RLIMIT_AS</c>/<c>RLIMIT_DATA</c> minus what is mapped.
/// A cgroup's room is its limit minus its usage plus its file cache (the kernel reclaims page cache
/// before it kills), at every level from the process's cgroup up to the root of the mount.
/// </summary>
internal static class LinuxMemoryLimits
{
    // cgroup v1 reports "no limit" as a page-rounded LONG_MAX; anything this big is no limit.
    private const ulong NoLimitThreshold = 1UL << 62;

    /// <summary>Where the process's memory cgroup is.</summary>
    /// <param name="Version">1 or 2; 0 when there is none (or it could not be found).</param>
    /// <param name="Directories">The cgroup's directory first, then each parent up to the mount point.</param>
    internal sealed record CgroupLocation(int Version, IReadOnlyList<string> Directories)
    {
        internal static readonly CgroupLocation None = new(0, []);
    }

    /// <summary>
    /// What the process can get, or <see langword="null"/> when <c>/proc/meminfo</c> cannot be read or
    /// has no <c>MemAvailable</c> (then nothing is known and nothing must be refused).
    /// </summary>
    /// <param name="read">Returns a file's text, or <see langword="null"/> if it cannot be read.</param>
    /// <param name="cgroup">From <see cref="FindCgroup"/>.</param>
    /// <param name="addressSpaceLimit">The soft <c>RLIMIT_AS</c>, or <see cref="ulong.MaxValue"/> for none.</param>
    /// <param name="dataLimit">The soft <c>RLIMIT_DATA</c>, or <see cref="ulong.MaxValue"/> for none.</param>
    internal static MemoryAvailability? Compute(Func<string, string?> read, CgroupLocation cgroup, ulong addressSpaceLimit, ulong dataLimit)
    {
        string? meminfo = read("/proc/meminfo");
        if (meminfo is null || FindKilobytes(meminfo, "MemAvailable:") is not { } memAvailable)
        {
            return null;
        }

        ulong swapFree = FindKilobytes(meminfo, "SwapFree:") ?? 0;
        ulong system = Add(memAvailable, swapFree);
        var explanation = new StringBuilder();
        explanation.Append(CultureInfo.InvariantCulture, $"MemAvailable + SwapFree {FormatGiB(system)}");

        ulong ram = memAvailable;
        ulong swap = swapFree;
        ulong combined = ulong.MaxValue;
        ulong? cgroupLimit = null;
        ulong cgroupRoom = ulong.MaxValue;
        foreach (string directory in cgroup.Directories)
        {
            if (cgroup.Version == 2)
            {
                ulong reclaimable = FileCache(read($"{directory}/memory.stat"), "inactive_file", "active_file");
                if (ReadLimit(read, $"{directory}/memory.max") is { } max)
                {
                    ulong room = Room(max, ReadValue(read, $"{directory}/memory.current"), reclaimable);
                    ram = Math.Min(ram, room);
                    NoteLimit(ref cgroupLimit, ref cgroupRoom, max, room);
                }

                if (ReadLimit(read, $"{directory}/memory.swap.max") is { } swapMax)
                {
                    swap = Math.Min(swap, Room(swapMax, ReadValue(read, $"{directory}/memory.swap.current"), 0));
                }
            }
            else if (cgroup.Version == 1)
            {
                string? stat = read($"{directory}/memory.stat");
                ulong reclaimable = FileCache(stat, "total_inactive_file", "total_active_file");
                if (reclaimable == 0)
                {
                    reclaimable = FileCache(stat, "inactive_file", "active_file");
                }

                if (ReadLimit(read, $"{directory}/memory.limit_in_bytes") is { } limit)
                {
                    ulong room = Room(limit, ReadValue(read, $"{directory}/memory.usage_in_bytes"), reclaimable);
                    ram = Math.Min(ram, room);
                    NoteLimit(ref cgroupLimit, ref cgroupRoom, limit, room);
                }

                if (ReadLimit(read, $"{directory}/memory.memsw.limit_in_bytes") is { } memsw)
                {
                    combined = Math.Min(combined, Room(memsw, ReadValue(read, $"{directory}/memory.memsw.usage_in_bytes"), reclaimable));
                }
            }
        }

        ulong available = Math.Min(Add(ram, swap), combined);
        explanation.Append(cgroupLimit is { } shown
            ? string.Create(CultureInfo.InvariantCulture, $"; cgroup v{cgroup.Version} limit {FormatGiB(shown)}, {FormatGiB(cgroupRoom)} free")
            : "; cgroup limit none");

        ulong memory = available;
        string? status = null;
        ApplyRlimit("RLIMIT_AS", addressSpaceLimit, "VmSize:");
        ApplyRlimit("RLIMIT_DATA", dataLimit, "VmData:");
        return new MemoryAvailability(available, memory, explanation.ToString());

        void ApplyRlimit(string name, ulong limit, string statusKey)
        {
            if (limit == ulong.MaxValue)
            {
                return;
            }

            status ??= read("/proc/self/status");
            ulong used = status is null ? 0 : FindKilobytes(status, statusKey) ?? 0;
            ulong room = limit > used ? limit - used : 0;
            explanation.Append(CultureInfo.InvariantCulture, $"; {name} {FormatGiB(limit)}, {FormatGiB(room)} unmapped");
            available = Math.Min(available, room);
        }
    }

    /// <summary>
    /// Finds the process's memory cgroup from the text of <c>/proc/self/cgroup</c> and
    /// <c>/proc/self/mountinfo</c>. The v1 memory controller wins when both hierarchies are mounted
    /// (hybrid systems bind the controller to v1).
    /// </summary>
    internal static CgroupLocation FindCgroup(string? procSelfCgroup, string? mountInfo)
    {
        if (procSelfCgroup is null || mountInfo is null)
        {
            return CgroupLocation.None;
        }

        string? v1Path = null;
        string? v2Path = null;
        foreach (string line in procSelfCgroup.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string[] parts = line.Split(':', 3);
            if (parts.Length != 3)
            {
                continue;
            }

            if (parts[0] == "0" && parts[1].Length == 0)
            {
                v2Path = parts[2];
            }
            else if (parts[1].Split(',').Contains("memory"))
            {
                v1Path = parts[2];
            }
        }

        foreach ((int version, string? path) in new[] { (1, v1Path), (2, v2Path) })
        {
            if (path is null)
            {
                continue;
            }

            foreach (string line in mountInfo.Split('\n', StringSplitOptions.RemoveEmptyEntries))
            {
                // "id parent major:minor root mountpoint options [optional fields] - fstype source superoptions"
                string[] fields = line.Split(' ');
                int separator = Array.IndexOf(fields, "-");
                if (fields.Length < 5 || separator < 0 || separator + 3 >= fields.Length)
                {
                    continue;
                }

                string fileSystem = fields[separator + 1];
                bool matches = version == 2
                    ? fileSystem == "cgroup2"
                    : fileSystem == "cgroup" && fields[separator + 3].Split(',').Contains("memory");
                if (matches)
                {
                    return new CgroupLocation(version, Directories(Unescape(fields[3]), Unescape(fields[4]), path));
                }
            }
        }

        return CgroupLocation.None;
    }

    /// <summary>The value of a <c>/proc/meminfo</c>-style "Key:   123 kB" line, in bytes.</summary>
    internal static ulong? FindKilobytes(string text, string key)
    {
        int start = 0;
        if (!text.StartsWith(key, StringComparison.Ordinal))
        {
            start = text.IndexOf("\n" + key, StringComparison.Ordinal) + 1;
            if (start == 0)
            {
                return null;
            }
        }

        ReadOnlySpan<char> rest = text.AsSpan(start + key.Length);
        int end = rest.IndexOf('\n');
        rest = (end < 0 ? rest : rest[..end]).Trim();
        if (rest.EndsWith("kB", StringComparison.Ordinal))
        {
            rest = rest[..^2].TrimEnd();
        }

        // Saturating, as Add: a value past ulong.MaxValue bytes must not wrap round to a small one.
        return ulong.TryParse(rest, NumberStyles.None, CultureInfo.InvariantCulture, out ulong kilobytes)
            ? kilobytes > ulong.MaxValue / 1024 ? ulong.MaxValue : kilobytes * 1024
            : null;
    }

    /// <summary>"22.1 GiB".</summary>
    internal static string FormatGiB(ulong bytes) => string.Create(CultureInfo.InvariantCulture, $"{bytes / (double)(1UL << 30):F1} GiB");

    private static List<string> Directories(string mountRoot, string mountPoint, string cgroupPath)
    {
        // The cgroup's path is relative to the hierarchy's root; the mount shows the part under mountRoot.
        string relative = mountRoot == "/" ? cgroupPath
            : cgroupPath.StartsWith(mountRoot, StringComparison.Ordinal) ? cgroupPath[mountRoot.Length..]
            : "/";
        string trimmedMount = mountPoint.TrimEnd('/');
        var directories = new List<string>();
        string current = relative.TrimEnd('/');
        while (true)
        {
            directories.Add(trimmedMount + current);
            if (current.Length == 0)
            {
                return directories;
            }

            current = current[..current.LastIndexOf('/')];
        }
    }

    // mountinfo escapes space, tab, newline and backslash as \ooo.
    private static string Unescape(string field)
    {
        if (!field.Contains('\\', StringComparison.Ordinal))
        {
            return field;
        }

        var builder = new StringBuilder(field.Length);
        for (int i = 0; i < field.Length; i++)
        {
            if (field[i] == '\\' && i + 3 < field.Length && IsOctal(field[i + 1]) && IsOctal(field[i + 2]) && IsOctal(field[i + 3]))
            {
                builder.Append((char)(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) | (field[i + 3] - '0')));
                i += 3;
            }
            else
            {
                builder.Append(field[i]);
            }
        }

        return builder.ToString();

        static bool IsOctal(char c) => c is >= '0' and <= '7';
    }

    private static ulong? ReadLimit(Func<string, string?> read, string path) =>
        ReadValue(read, path) is { } value && value < NoLimitThreshold ? value : null;

    // "max" and unreadable or unparsable files are null.
    private static ulong? ReadValue(Func<string, string?> read, string path) =>
        read(path) is { } text && ulong.TryParse(text.AsSpan().Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out ulong value) ? value : null;

    private static ulong FileCache(string? stat, string inactiveKey, string activeKey) =>
        stat is null ? 0 : Add(StatValue(stat, inactiveKey), StatValue(stat, activeKey));

    // memory.stat lines are "key value".
    private static ulong StatValue(string stat, string key)
    {
        foreach (string line in stat.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            int space = line.IndexOf(' ', StringComparison.Ordinal);
            if (space == key.Length && line.StartsWith(key, StringComparison.Ordinal)
                && ulong.TryParse(line.AsSpan(space + 1).Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out ulong value))
            {
                return value;
            }
        }

        return 0;
    }

    // An unknown usage counts as none: better to miss a refusal than to make a spurious one.
    private static ulong Room(ulong limit, ulong? usage, ulong reclaimable)
    {
        ulong used = usage ?? 0;
        used = used > reclaimable ? used - reclaimable : 0;
        return limit > used ? limit - used : 0;
    }

    private static void NoteLimit(ref ulong? shownLimit, ref ulong shownRoom, ulong limit, ulong room)
    {
        if (room < shownRoom)
        {
            shownLimit = limit;
            shownRoom = room;
        }
    }

    private static ulong Add(ulong a, ulong b) => a > ulong.MaxValue - b ? ulong.MaxValue : a + b;
}
