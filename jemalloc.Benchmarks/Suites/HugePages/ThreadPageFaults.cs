using System.Runtime.InteropServices;

namespace jemalloc.Benchmarks.Suites.HugePages;

/// <summary>
/// The calling thread's page faults so far, from <c>getrusage(RUSAGE_THREAD)</c>: counted around
/// each operation of the <c>hugepages</c> suite, so the figure covers exactly the operation's own
/// faults (not other threads', nor BenchmarkDotNet's between iterations).
/// </summary>
internal static unsafe partial class ThreadPageFaults
{
    private const int RusageThread = 1;

    // struct rusage on 64-bit Linux: two struct timeval (2 longs each), then 14 longs, ru_minflt the 5th.
    private const int LongsInRusage = 18;
    private const int MinorFaultIndex = 8;
    private const int MajorFaultIndex = 9;

    /// <summary>Whether the count can be read here (Linux).</summary>
    internal static bool IsSupported => OperatingSystem.IsLinux();

    /// <summary>Minor plus major page faults of the calling thread so far, or 0 where unsupported.</summary>
    internal static long Read()
    {
        if (!IsSupported)
        {
            return 0;
        }

        long* usage = stackalloc long[LongsInRusage];
        return GetRusage(RusageThread, usage) == 0 ? usage[MinorFaultIndex] + usage[MajorFaultIndex] : 0;
    }

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static partial int GetRusage(int who, long* usage);
}
