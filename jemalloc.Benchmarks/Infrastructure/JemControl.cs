using System.Runtime.InteropServices;
using System.Text;
using jemalloc.Interop;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The few jemalloc controls the benchmarks read: statistics counters, options and the statistics
/// report. Errors are reported as <see cref="InvalidOperationException"/> naming the control.
/// </summary>
public static unsafe class JemControl
{
    private const int ENOENT = 2;
    private const int EAGAIN = 11;

    /// <summary>The version string jemalloc reports (<c>version</c>).</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static string Version => ReadString("version");

    /// <summary>Reads a <c>uint64_t</c> control.</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static ulong ReadUInt64(string name) => Read<ulong>(name);

    /// <summary>Reads a <c>size_t</c> control.</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static ulong ReadSize(string name) => Read<nuint>(name);

    /// <summary>Reads an <c>unsigned</c> control.</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static uint ReadUInt32(string name) => Read<uint>(name);

    /// <summary>Reads an <c>ssize_t</c> control.</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static long ReadSignedSize(string name) => Read<nint>(name);

    /// <summary>Reads a C <c>bool</c> control (one byte).</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static bool ReadBool(string name) => Read<byte>(name) != 0;

    /// <summary>Reads a <c>const char*</c> control.</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static string ReadString(string name)
    {
        byte* text = Read<nint>(name) is var p ? (byte*)p : null;
        return text == null ? "" : Marshal.PtrToStringUTF8((nint)text) ?? "";
    }

    /// <summary>
    /// Flushes this thread's cache and advances the statistics epoch, so that the <c>stats.*</c>
    /// counters read next are exact. Not free: never call it inside a measured region.
    /// </summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the epoch update.</exception>
    public static void RefreshStatistics()
    {
        // Fails with EAGAIN/ENOENT when the thread cache is disabled (tcache:false); nothing to flush then.
        int flushed = Control("thread.tcache.flush", null, null, null, 0);
        if (flushed != 0 && flushed != EAGAIN && flushed != ENOENT)
        {
            Fail("thread.tcache.flush", flushed);
        }

        ulong epoch = 1;
        int rc = Control("epoch", null, null, &epoch, (nuint)sizeof(ulong));
        if (rc != 0)
        {
            Fail("epoch", rc);
        }
    }

    /// <summary>Bytes in live jemalloc allocations, process-wide (<c>stats.allocated</c>, refreshed first).</summary>
    /// <exception cref="InvalidOperationException">jemalloc refused the read.</exception>
    public static ulong LiveBytes() => Jem.GetStatistics(exact: true).Allocated;

    /// <summary>
    /// The full statistics report of <c>malloc_stats_print</c>: human-readable text, or JSON when
    /// <paramref name="json"/> is set.
    /// </summary>
    public static string StatisticsReport(bool json) => json ? Jem.GetStatsJson() : Jem.GetStatsText();

    private static T Read<T>(string name) where T : unmanaged
    {
        T value = default;
        nuint length = (nuint)sizeof(T);
        int rc = Control(name, &value, &length, null, 0);
        if (rc != 0)
        {
            Fail(name, rc);
        }

        return value;
    }

    private static int Control(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        int bytes = Encoding.UTF8.GetByteCount(name);
        Span<byte> utf8 = bytes < 256 ? stackalloc byte[bytes + 1] : new byte[bytes + 1];
        Encoding.UTF8.GetBytes(name, utf8);
        utf8[bytes] = 0;
        fixed (byte* namePtr = utf8)
        {
            return JemNative.Mallctl(namePtr, oldValue, oldLength, newValue, newLength);
        }
    }

    private static void Fail(string name, int errno) =>
        throw new InvalidOperationException($"jemalloc refused mallctl(\"{name}\"): error {errno} ({ErrorName(errno)}).");

    private static string ErrorName(int errno) => errno switch
    {
        1 => "EPERM: read-only",
        2 => "ENOENT: unknown name or feature not built",
        11 => "EAGAIN",
        14 => "EFAULT",
        22 => "EINVAL: wrong value size",
        _ => "errno",
    };
}
