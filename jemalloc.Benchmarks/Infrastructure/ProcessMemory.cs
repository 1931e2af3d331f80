using System.Globalization;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Reads a process's memory counters from Linux <c>/proc</c>: resident and peak resident memory
/// and page faults. Works for this process and for a child process of the same user.
/// </summary>
public static class ProcessMemory
{
    /// <summary>Whether the counters can be read here (Linux with <c>/proc</c>).</summary>
    public static bool IsSupported => OperatingSystem.IsLinux() && File.Exists("/proc/self/status");

    /// <summary>The peak resident set size in bytes (<c>VmHWM</c>), or null if it cannot be read.</summary>
    public static long? PeakResidentBytes(int processId) => StatusKilobytes(processId, "VmHWM:") * 1024;

    /// <summary>The resident set size in bytes (<c>VmRSS</c>), or null if it cannot be read.</summary>
    public static long? ResidentBytes(int processId) => StatusKilobytes(processId, "VmRSS:") * 1024;

    /// <summary>
    /// Sets the peak resident size back to the current resident size (writes 5 to
    /// <c>/proc/&lt;pid&gt;/clear_refs</c>), so the next peak read covers only what happens after.
    /// </summary>
    /// <returns>Whether the kernel accepted it.</returns>
    public static bool ResetPeakResident(int processId)
    {
        try
        {
            File.WriteAllText($"/proc/{processId}/clear_refs", "5");
            return true;
        }
        catch (IOException)
        {
            return false;
        }
        catch (UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>Minor and major page faults so far (fields 10 and 12 of <c>/proc/&lt;pid&gt;/stat</c>), or null.</summary>
    public static (long Minor, long Major)? PageFaults(int processId)
    {
        string? stat = TryRead($"/proc/{processId}/stat");
        if (stat is null)
        {
            return null;
        }

        // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
        string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        // fields[0] is field 3 (state): minflt is field 10, majflt field 12.
        return fields.Length > 9
            ? (long.Parse(fields[7], CultureInfo.InvariantCulture), long.Parse(fields[9], CultureInfo.InvariantCulture))
            : null;
    }

    private static long? StatusKilobytes(int processId, string key)
    {
        string? status = TryRead($"/proc/{processId}/status");
        if (status is null)
        {
            return null;
        }

        foreach (string line in status.Split('\n'))
        {
            if (line.StartsWith(key, StringComparison.Ordinal))
            {
                string number = line[key.Length..].Trim().Split(' ')[0];
                return long.Parse(number, CultureInfo.InvariantCulture);
            }
        }

        return null;
    }

    private static string? TryRead(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (IOException)
        {
            return null;
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    }
}
