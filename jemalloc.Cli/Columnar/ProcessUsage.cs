using System.Diagnostics;
using System.Runtime.InteropServices;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// The whole process's resource counters at one moment, from <c>getrusage(RUSAGE_SELF)</c> on Linux
/// (every thread counted): CPU times, page faults and context switches. Elsewhere only the CPU times
/// are known and the counters are -1.
/// </summary>
/// <param name="UserSeconds">CPU time in user mode so far.</param>
/// <param name="SystemSeconds">CPU time in the kernel so far.</param>
/// <param name="MinorFaults">Page faults served without I/O so far, or -1.</param>
/// <param name="MajorFaults">Page faults that needed I/O so far, or -1.</param>
/// <param name="VoluntarySwitches">Voluntary context switches so far, or -1.</param>
/// <param name="InvoluntarySwitches">Involuntary context switches so far, or -1.</param>
public readonly partial record struct ProcessUsage(
    double UserSeconds,
    double SystemSeconds,
    long MinorFaults,
    long MajorFaults,
    long VoluntarySwitches,
    long InvoluntarySwitches)
{
    private const int RusageSelf = 0;

    // struct rusage on 64-bit Linux: two struct timeval (seconds, microseconds), then 14 longs:
    // maxrss, ixrss, idrss, isrss, minflt, majflt, nswap, inblock, oublock, msgsnd, msgrcv, nsignals, nvcsw, nivcsw.
    private const int LongsInRusage = 18;

    /// <summary>Whether the faults and context switches can be read here (64-bit Linux).</summary>
    public static bool IsSupported => OperatingSystem.IsLinux() && Environment.Is64BitProcess;

    /// <summary>The counters now.</summary>
    public static unsafe ProcessUsage Now()
    {
        if (IsSupported)
        {
            long* usage = stackalloc long[LongsInRusage];
            if (GetRusage(RusageSelf, usage) == 0)
            {
                return new ProcessUsage(usage[0] + (usage[1] / 1e6), usage[2] + (usage[3] / 1e6), usage[8], usage[9], usage[16], usage[17]);
            }
        }

        using Process self = Process.GetCurrentProcess();
        return new ProcessUsage(self.UserProcessorTime.TotalSeconds, self.PrivilegedProcessorTime.TotalSeconds, -1, -1, -1, -1);
    }

    /// <summary>What happened between <paramref name="before"/> and this moment (a counter unknown at either end stays -1).</summary>
    public ProcessUsage Since(ProcessUsage before) => new(
        UserSeconds - before.UserSeconds,
        SystemSeconds - before.SystemSeconds,
        Delta(MinorFaults, before.MinorFaults),
        Delta(MajorFaults, before.MajorFaults),
        Delta(VoluntarySwitches, before.VoluntarySwitches),
        Delta(InvoluntarySwitches, before.InvoluntarySwitches));

    private static long Delta(long after, long before) => after < 0 || before < 0 ? -1 : after - before;

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static unsafe partial int GetRusage(int who, long* usage);
}
