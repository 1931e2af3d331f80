using System.Globalization;
using System.Runtime.Intrinsics.X86;

namespace jemalloc.Simd;

/// <summary>
/// The size of the CPU's last-level cache, read once from the OS (<c>LastLevelCache.Unix.cs</c>,
/// <c>LastLevelCache.Windows.cs</c>), else from the CPU's own report (CPUID on x86/x64), else
/// <see cref="FallbackBytes"/>. Fills larger than it are where the choice of store kernel matters.
/// </summary>
internal static partial class LastLevelCache
{
    /// <summary>The size assumed when neither the OS nor the CPU tells (32 MiB, a common server L3).</summary>
    internal const long FallbackBytes = 32L << 20;

    // Read once, on first use; readonly, so every later fill reads it as a constant.
    private static readonly (long Bytes, string Source) s_found = Find();

    /// <summary>The last-level cache's size in bytes.</summary>
    internal static long Bytes => s_found.Bytes;

    /// <summary>Where <see cref="Bytes"/> came from, for reports.</summary>
    internal static string Source => s_found.Source;

    /// <summary>
    /// A cache size as Linux's sysfs writes it (<c>32768K</c>, <c>1M</c>, or plain bytes); null when
    /// the text is not one.
    /// </summary>
    internal static long? ParseSysfsSize(string? text)
    {
        ReadOnlySpan<char> span = text.AsSpan().Trim();
        if (span.IsEmpty)
        {
            return null;
        }

        long unit = char.ToUpperInvariant(span[^1]) switch
        {
            'K' => 1L << 10,
            'M' => 1L << 20,
            'G' => 1L << 30,
            _ => 1,
        };
        if (unit != 1)
        {
            span = span[..^1];
        }

        return long.TryParse(span, NumberStyles.None, CultureInfo.InvariantCulture, out long value) && value > 0 && value <= long.MaxValue / unit
            ? value * unit
            : null;
    }

    private static (long Bytes, string Source) Find()
    {
        try
        {
            if (OperatingSystem.IsLinux() && ReadLinux() is long linux)
            {
                return (linux, SysfsDirectory);
            }

            if (OperatingSystem.IsWindows() && ReadWindows() is long windows)
            {
                return (windows, "GetLogicalProcessorInformationEx");
            }
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or DllNotFoundException or EntryPointNotFoundException)
        {
            // The OS would not say: ask the CPU.
        }

        return ReadCpuid() is long cpuid ? (cpuid, "CPUID") : (FallbackBytes, "fallback (the OS and CPU did not say)");
    }

    // CPUID's deterministic cache parameters: leaf 4 (Intel) or 0x8000001D (AMD, Hygon), one
    // sub-leaf per cache; size = ways x partitions x line size x sets. Hypervisors usually pass
    // these through even where the guest kernel lists no caches in sysfs.
    private static long? ReadCpuid()
    {
        if (!X86Base.IsSupported)
        {
            return null;
        }

        (_, int b, int c, int d) = X86Base.CpuId(0, 0);
        bool amd = (b, d, c) is (0x68747541, 0x69746E65, 0x444D4163) // "AuthenticAMD"
            or (0x6F677948, 0x6E65476E, 0x656E6975); // "HygonGenuine"
        int leaf = amd ? unchecked((int)0x8000001D) : 4;
        int maxLeaf = amd ? X86Base.CpuId(unchecked((int)0x80000000), 0).Eax : X86Base.CpuId(0, 0).Eax;
        if ((uint)maxLeaf < (uint)leaf)
        {
            return null;
        }

        long best = 0;
        int bestLevel = 0;
        for (int sub = 0; sub < 16; sub++)
        {
            (int eax, int ebx, int ecx, _) = X86Base.CpuId(leaf, sub);
            int type = eax & 0x1F;
            if (type == 0)
            {
                break;
            }

            if (type == 2)
            {
                continue; // an instruction cache
            }

            int level = (eax >> 5) & 0x7;
            long size = (long)(((uint)ebx >> 22) + 1) * ((((uint)ebx >> 12) & 0x3FF) + 1) * (((uint)ebx & 0xFFF) + 1) * ((uint)ecx + 1L);
            if (level > bestLevel || (level == bestLevel && size > best))
            {
                (bestLevel, best) = (level, size);
            }
        }

        return best > 0 ? best : null;
    }
}
