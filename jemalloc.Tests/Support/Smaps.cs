using System.Globalization;

namespace jemalloc.Tests.Support;

/// <summary>
/// Reads <c>/proc/self/smaps</c> and the kernel's THP mode directly, independently of the library's
/// <c>HugePageInfo</c>, so huge-page tests check the kernel's own numbers.
/// </summary>
internal static class Smaps
{
    /// <summary>The bracketed word of <c>/sys/kernel/mm/transparent_hugepage/enabled</c>, or null without one.</summary>
    internal static string? ThpMode()
    {
        const string path = "/sys/kernel/mm/transparent_hugepage/enabled";
        if (!OperatingSystem.IsLinux() || !File.Exists(path))
        {
            return null;
        }

        string text = File.ReadAllText(path);
        int open = text.IndexOf('[', StringComparison.Ordinal);
        int close = text.IndexOf(']', StringComparison.Ordinal);
        return open >= 0 && close > open ? text[(open + 1)..close] : null;
    }

    /// <summary>
    /// Whether this library's memory gets transparent huge pages when it asks: the kernel gives them to
    /// advised memory, and the library asks (on x64 Linux only: on arm64 the huge page size depends
    /// on the kernel's base page, so <see cref="HugePageInfo"/> reports them unavailable there).
    /// </summary>
    internal static bool HugePagesOnRequest =>
        System.Runtime.InteropServices.RuntimeInformation.ProcessArchitecture == System.Runtime.InteropServices.Architecture.X64
        && ThpMode() is "madvise" or "always";

    /// <summary>
    /// Huge-page bytes the kernel reports for the range: for each mapping overlapping it, its
    /// <c>AnonHugePages</c>, at most the overlap.
    /// </summary>
    internal static long AnonHugePageBytes(nint address, long length)
    {
        long total = 0;
        foreach (Mapping mapping in Read())
        {
            long overlap = Math.Min(mapping.End, (long)address + length) - Math.Max(mapping.Start, (long)address);
            if (overlap > 0)
            {
                total += Math.Min(overlap, mapping.AnonHugePageBytes);
            }
        }

        return total;
    }

    /// <summary>Whether every mapping overlapping the range was advised with MADV_HUGEPAGE (VmFlags "hg").</summary>
    internal static bool AdvisedHuge(nint address, long length)
    {
        var overlapping = Read().Where(m => m.Start < (long)address + length && m.End > (long)address).ToList();
        return overlapping.Count > 0 && overlapping.All(m => m.VmFlags.Contains("hg"));
    }

    /// <summary>Whether any mapping overlapping the range was advised with MADV_HUGEPAGE (VmFlags "hg").</summary>
    internal static bool AnyAdvisedHuge(nint address, long length) =>
        Read().Any(m => m.Start < (long)address + length && m.End > (long)address && m.VmFlags.Contains("hg"));

    private sealed record Mapping(long Start, long End, long AnonHugePageBytes, string[] VmFlags);

    private static List<Mapping> Read()
    {
        var mappings = new List<Mapping>();
        long start = 0, end = 0, anonHuge = 0;
        bool open = false;
        foreach (string line in File.ReadLines("/proc/self/smaps"))
        {
            int dash = line.IndexOf('-', StringComparison.Ordinal);
            int space = line.IndexOf(' ', StringComparison.Ordinal);
            if (dash > 0 && space > dash && long.TryParse(line.AsSpan(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out long s)
                && long.TryParse(line.AsSpan(dash + 1, space - dash - 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out long e))
            {
                start = s;
                end = e;
                anonHuge = 0;
                open = true;
            }
            else if (open && line.StartsWith("AnonHugePages:", StringComparison.Ordinal))
            {
                anonHuge = long.Parse(line["AnonHugePages:".Length..].Replace("kB", "", StringComparison.Ordinal).Trim(), CultureInfo.InvariantCulture) * 1024;
            }
            else if (open && line.StartsWith("VmFlags:", StringComparison.Ordinal))
            {
                // The last field of a mapping's block.
                mappings.Add(new Mapping(start, end, anonHuge, line["VmFlags:".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries)));
                open = false;
            }
        }

        return mappings;
    }
}
