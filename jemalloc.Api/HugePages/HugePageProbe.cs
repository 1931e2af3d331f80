using System.Globalization;

namespace jemalloc.HugePages;

/// <summary>
/// The kernel-facing side of <c>HugePageInfo</c>: the transparent huge page mode and a range's
/// huge-page and resident bytes, read from a <see cref="IHugePageSource"/> (the system's, or a test's).
/// </summary>
internal static unsafe class HugePageProbe
{
    private const long KiB = 1024;

    /// <summary>The kernel's transparent huge page mode, read now.</summary>
    internal static TransparentHugePageMode Mode => ReadMode(SystemHugePageSource.Instance);

    /// <summary>Whether the OS gives transparent huge pages to memory that asks for them.</summary>
    internal static bool IsAvailable => Mode is TransparentHugePageMode.Madvise or TransparentHugePageMode.Always;

    internal static TransparentHugePageMode ReadMode(IHugePageSource source)
    {
        string? text = source.Unsupported is null ? source.ReadEnabled() : null;
        if (text is null)
        {
            return TransparentHugePageMode.Unavailable;
        }

        // The file lists the modes with the current one in brackets: "always [madvise] never".
        int open = text.IndexOf('[', StringComparison.Ordinal);
        int close = open < 0 ? -1 : text.IndexOf(']', open);
        string current = (open >= 0 && close > open ? text[(open + 1)..close] : text).Trim();
        return current switch
        {
            "always" => TransparentHugePageMode.Always,
            "madvise" => TransparentHugePageMode.Madvise,
            "never" => TransparentHugePageMode.Never,
            _ => TransparentHugePageMode.Unavailable,
        };
    }

    internal static HugePageReport Query(nint address, nuint length, IHugePageSource source)
    {
        if (length == 0)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "The length must be greater than zero.");
        }

        ulong start = (ulong)address;
        ulong end = start + length;
        if (end < start)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "The range wraps around the end of the address space.");
        }

        TransparentHugePageMode mode = ReadMode(source);
        if (mode == TransparentHugePageMode.Unavailable)
        {
            string why = source.Unsupported
                ?? "This kernel offers no transparent huge pages (no /sys/kernel/mm/transparent_hugepage/enabled): the memory uses normal pages.";
            return new HugePageReport(mode, address, length, 0, 0, null, why);
        }

        using TextReader? smaps = source.OpenSmaps();
        if (smaps is null)
        {
            return new HugePageReport(mode, address, length, 0, 0, null,
                $"Transparent huge pages are in mode {ModeName(mode)}, but /proc/self/smaps cannot be read, so the range's backing is unknown.");
        }

        var usage = ReadUsage(smaps, start, end);
        if (usage.MappedBytes != length)
        {
            throw new ArgumentException(
                $"Only {usage.MappedBytes:N0} of the {length:N0} bytes from 0x{start:X} are mapped in this process: the range is not (all) live memory.", nameof(address));
        }

        return new HugePageReport(mode, address, length, usage.Resident, usage.Huge, usage.Eligible,
            Explain(mode, length, usage.Resident, usage.Huge, usage.Eligible));
    }

    private static (ulong MappedBytes, long Resident, long Huge, bool? Eligible) ReadUsage(TextReader smaps, ulong start, ulong end)
    {
        ulong mapped = 0;
        long resident = 0;
        long huge = 0;
        bool? eligible = null;
        long overlap = 0;
        while (smaps.ReadLine() is { } line)
        {
            if (TryParseMappingHeader(line, out ulong mappingStart, out ulong mappingEnd))
            {
                overlap = mappingStart < end && mappingEnd > start
                    ? (long)(Math.Min(mappingEnd, end) - Math.Max(mappingStart, start))
                    : 0;
                mapped += (ulong)overlap;
                continue;
            }

            if (overlap == 0)
            {
                continue;
            }

            if (TryParseField(line, "Rss:", out long rssKiB))
            {
                resident += Math.Min(rssKiB * KiB, overlap);
            }
            else if (TryParseField(line, "AnonHugePages:", out long hugeKiB))
            {
                huge += Math.Min(hugeKiB * KiB, overlap);
            }
            else if (TryParseField(line, "THPeligible:", out long flag))
            {
                eligible = (eligible ?? true) && flag == 1;
            }
        }

        return (mapped, resident, huge, eligible);
    }

    // A mapping starts with "start-end perms offset dev inode [path]", addresses in hex.
    private static bool TryParseMappingHeader(string line, out ulong start, out ulong end)
    {
        start = end = 0;
        int dash = line.IndexOf('-', StringComparison.Ordinal);
        int space = line.IndexOf(' ', StringComparison.Ordinal);
        return dash > 0 && space > dash
            && ulong.TryParse(line.AsSpan(0, dash), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out start)
            && ulong.TryParse(line.AsSpan(dash + 1, space - dash - 1), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out end);
    }

    // A field is "Name:   value [kB]".
    private static bool TryParseField(string line, string name, out long value)
    {
        value = 0;
        if (!line.StartsWith(name, StringComparison.Ordinal))
        {
            return false;
        }

        ReadOnlySpan<char> rest = line.AsSpan(name.Length).Trim();
        int space = rest.IndexOf(' ');
        return long.TryParse(space < 0 ? rest : rest[..space], NumberStyles.None, CultureInfo.InvariantCulture, out value);
    }

    private static string Explain(TransparentHugePageMode mode, nuint length, long resident, long huge, bool? eligible)
    {
        if (mode == TransparentHugePageMode.Never)
        {
            return "Transparent huge pages are switched off in this kernel (mode never): the range uses 4 KiB pages.";
        }

        if (huge > 0)
        {
            return $"{huge:N0} of the range's {length:N0} bytes ({huge / (double)length:P0}) are in transparent huge pages (kernel mode {ModeName(mode)}).";
        }

        if (eligible == false)
        {
            return $"The kernel does not consider this memory eligible for huge pages (mode {ModeName(mode)}): in mode madvise memory must ask for them (AllocationOptions.HugePages, or a JemArena with hugePages).";
        }

        if (resident == 0)
        {
            return "None of the range is in physical memory yet: huge pages are assigned when memory is first written; query again after writing.";
        }

        return $"The range is in 4 KiB pages (mode {ModeName(mode)}): it is smaller than a 2 MiB huge page or not 2 MiB-aligned, was written before it asked for huge pages, or the kernel had no free huge page.";
    }

    private static string ModeName(TransparentHugePageMode mode) => mode switch
    {
        TransparentHugePageMode.Always => "always",
        TransparentHugePageMode.Madvise => "madvise",
        TransparentHugePageMode.Never => "never",
        _ => "unavailable",
    };
}
