using System.Globalization;

namespace jemalloc.Cli;

/// <summary>
/// Refuses, before anything is allocated, a run whose memory cannot fit in this machine: the
/// available memory from <c>/proc/meminfo</c> for everything, and the garbage collector's limit for
/// the managed side.
/// </summary>
public static class MemoryCheck
{
    /// <summary>Memory kept free for the runtime, BenchmarkDotNet and the rest of the machine.</summary>
    public const long Headroom = 512L * 1024 * 1024;

    /// <summary>The memory the kernel says can be allocated without swapping (<c>MemAvailable</c>), or null where unknown.</summary>
    public static long? AvailableBytes()
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/meminfo"))
            {
                if (line.StartsWith("MemAvailable:", StringComparison.Ordinal))
                {
                    return long.Parse(line["MemAvailable:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return null;
    }

    /// <summary>The most the garbage collector will let the managed heap use (a container or configured limit, or the machine's memory).</summary>
    public static long ManagedLimitBytes() => GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;

    /// <summary>
    /// Throws when <paramref name="need"/> does not fit. The native and managed parts are never
    /// alive together (each benchmark allocates only its own structure), so the larger one counts.
    /// </summary>
    /// <exception cref="InsufficientMemoryException">It does not fit; the message says how much it needs and what there is.</exception>
    public static void EnsureFits(string verb, MemoryNeed need) => EnsureFits(verb, need, AvailableBytes(), ManagedLimitBytes());

    /// <summary>The check of <see cref="EnsureFits(string, MemoryNeed)"/> against given limits.</summary>
    /// <exception cref="InsufficientMemoryException">It does not fit.</exception>
    public static void EnsureFits(string verb, MemoryNeed need, long? availableBytes, long managedLimitBytes)
    {
        ArgumentNullException.ThrowIfNull(need);
        long peak = Math.Max(need.NativeBytes, need.ManagedBytes);
        if (availableBytes is long available && peak > available - Headroom)
        {
            throw new InsufficientMemoryException(
                $"jembench {verb}: {need.Description} needs about {Format(peak)} of memory at once, but this machine has {Format(available)} available " +
                $"({Format(Headroom)} of it is kept for the runtime). Use a smaller size or a smaller element type.");
        }

        if (need.ManagedBytes > managedLimitBytes - Headroom)
        {
            throw new InsufficientMemoryException(
                $"jembench {verb}: the managed side needs about {Format(need.ManagedBytes)}, but the garbage collector's limit is {Format(managedLimitBytes)}. Use a smaller size.");
        }
    }

    /// <summary>Bytes as a short text in binary units, e.g. "16.8 GB (15.6 GiB)".</summary>
    public static string Format(long bytes) => bytes >= 1_000_000_000
        ? string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e9:0.0} GB ({bytes / (double)(1L << 30):0.0} GiB)")
        : string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e6:0.0} MB");
}
