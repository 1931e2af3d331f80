namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The few jemalloc controls the benchmarks read: statistics counters, options and the statistics
/// report, through the library's public mallctl API. Errors are reported as
/// <see cref="MallctlException"/> (an <see cref="InvalidOperationException"/>) naming the control.
/// </summary>
public static class JemControl
{
    /// <summary>The version string jemalloc reports (<c>version</c>).</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static string Version => ReadString("version");

    /// <summary>Reads a <c>uint64_t</c> control.</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static ulong ReadUInt64(string name) => Jem.GetMallctl<ulong>(name);

    /// <summary>Reads a <c>size_t</c> control.</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static ulong ReadSize(string name) => Jem.GetMallctl<nuint>(name);

    /// <summary>Reads an <c>unsigned</c> control.</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static uint ReadUInt32(string name) => Jem.GetMallctl<uint>(name);

    /// <summary>Reads an <c>ssize_t</c> control.</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static long ReadSignedSize(string name) => Jem.GetMallctl<nint>(name);

    /// <summary>Reads a C <c>bool</c> control (one byte).</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static bool ReadBool(string name) => Jem.GetMallctl<bool>(name);

    /// <summary>Reads a <c>const char*</c> control.</summary>
    /// <exception cref="MallctlException">jemalloc refused the read, or the control is not a string.</exception>
    public static string ReadString(string name) => Jem.GetMallctlString(name) ?? "";

    /// <summary>
    /// Flushes this thread's cache and advances the statistics epoch, so that the <c>stats.*</c>
    /// counters read next are exact. Not free: never call it inside a measured region.
    /// </summary>
    /// <exception cref="MallctlException">jemalloc refused the epoch update.</exception>
    public static void RefreshStatistics()
    {
        // Fails with EAGAIN/ENOENT when the thread cache is disabled (tcache:false); nothing to flush then.
        try
        {
            MallctlKeys.Thread.TcacheFlush.Run();
        }
        catch (MallctlException exception) when (exception.Error is MallctlError.TryAgain or MallctlError.NotFound)
        {
        }

        MallctlKeys.Epoch.Set(1);
    }

    /// <summary>Bytes in live jemalloc allocations, process-wide (<c>stats.allocated</c>, refreshed first).</summary>
    /// <exception cref="MallctlException">jemalloc refused the read.</exception>
    public static ulong LiveBytes() => Jem.GetStatistics(exact: true).Allocated;

    /// <summary>
    /// The full statistics report of <c>malloc_stats_print</c>: human-readable text, or JSON when
    /// <paramref name="json"/> is set.
    /// </summary>
    public static string StatisticsReport(bool json) => json ? Jem.GetStatsJson() : Jem.GetStatsText();
}
