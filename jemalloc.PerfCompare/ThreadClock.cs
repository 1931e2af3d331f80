using System.Diagnostics;
using System.Runtime.InteropServices;

namespace jemalloc.PerfCompare;

/// <summary>
/// The two clocks a measurement is timed with: the wall clock (<see cref="Stopwatch"/>) and, on Linux,
/// the CPU time of the calling thread (<c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c>, in ns), which
/// leaves out the time other processes held the core: on a machine where other work runs, the wall
/// clock measures the queue as well as the code.
/// </summary>
internal static unsafe partial class ThreadClock
{
    private const int ClockThreadCpuTime = 3;

    /// <summary>Both clocks now: <see cref="Stopwatch"/> ticks and the thread's CPU ns (-1 where there is none).</summary>
    internal static (long WallTicks, long CpuNanoseconds) Now() => (Stopwatch.GetTimestamp(), CpuNanoseconds());

    /// <summary>The time from <paramref name="start"/> to now on both clocks, in ns (CPU -1 where there is none).</summary>
    internal static (double Wall, double Cpu) Since((long WallTicks, long CpuNanoseconds) start)
    {
        long cpu = CpuNanoseconds();
        long wall = Stopwatch.GetTimestamp();
        return ((wall - start.WallTicks) * 1e9 / Stopwatch.Frequency, cpu < 0 || start.CpuNanoseconds < 0 ? -1 : cpu - start.CpuNanoseconds);
    }

    private static long CpuNanoseconds()
    {
        if (!OperatingSystem.IsLinux())
        {
            return -1;
        }

        // struct timespec on 64-bit Linux: two 64-bit fields, seconds and nanoseconds.
        long* timespec = stackalloc long[2];
        return ClockGetTime(ClockThreadCpuTime, timespec) == 0 ? (timespec[0] * 1_000_000_000L) + timespec[1] : -1;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, long* timespec);
}
