using System.Diagnostics;
using System.Runtime.InteropServices;
using jemalloc.HugePages;
using jemalloc.Interop;

namespace jemalloc.Memory;

/// <summary>
/// Measures what first touching fresh memory costs on this host with 4 KiB pages and with transparent
/// huge pages, for <see cref="HugePagePolicy"/>'s measured selection. Two 2 MiB-aligned probes come
/// through the library's own allocation path, one advised for huge pages as an array would be, the
/// other held to 4 KiB pages with <c>MADV_NOHUGEPAGE</c> (in mode <c>always</c> the kernel would
/// otherwise give it huge pages, and in mode <c>madvise</c> jemalloc may hand back memory advised
/// earlier). Each round drops both probes' pages (<c>MADV_DONTNEED</c>), so every touch faults fresh
/// pages in, and writes each probe whole, as filling a new array does; the rounds alternate which
/// probe goes first, and the best round of each counts, since interference only ever slows a round.
/// </summary>
internal static unsafe class FirstTouchProbe
{
    /// <summary>Each probe's size: eight huge pages, enough for the fault cost to dominate the timer's.</summary>
    internal const long ProbeBytes = 16L << 20;

    /// <summary>Fresh touches of each probe.</summary>
    internal const int Rounds = 5;

    private const double BytesPerGiB = 1L << 30;

    /// <summary>Measures both probes in kernel mode <paramref name="mode"/> (madvise or always) and decides.</summary>
    internal static HugePageMeasurement Measure(TransparentHugePageMode mode)
    {
        if (!OperatingSystem.IsLinux())
        {
            return HugePageMeasurement.NotMeasured(mode, "this OS offers no transparent huge pages to this library.");
        }

        nuint size = (nuint)ProbeBytes;
        int flags = HugePageAdvisor.AlignFlags(0);
        void* normal;
        void* huge;
        try
        {
            normal = NativeAllocator.Allocate(size, flags, hugePages: false, zero: false);
        }
        catch (OutOfMemoryException)
        {
            return HugePageMeasurement.NotMeasured(mode, "the probe's memory could not be had.");
        }

        try
        {
            huge = NativeAllocator.Allocate(size, flags, hugePages: true, zero: false);
        }
        catch (OutOfMemoryException)
        {
            NativeAllocator.Free(normal, size, flags);
            return HugePageMeasurement.NotMeasured(mode, "the probe's memory could not be had.");
        }

        try
        {
            if (Libc.Madvise((nint)normal, size, Libc.MadvNoHugePage) != 0)
            {
                return HugePageMeasurement.NotMeasured(mode, $"the kernel refused MADV_NOHUGEPAGE (errno {Marshal.GetLastPInvokeError()}), so no probe is sure to be in 4 KiB pages.");
            }

            double bestNormal = double.PositiveInfinity;
            double bestHuge = double.PositiveInfinity;
            for (int round = 0; round < Rounds; round++)
            {
                bool hugeFirst = (round & 1) != 0;
                for (int turn = 0; turn < 2; turn++)
                {
                    bool isHuge = (turn == 0) == hugeFirst;
                    double seconds = TouchFresh(isHuge ? huge : normal, size);
                    if (seconds < 0)
                    {
                        return HugePageMeasurement.NotMeasured(mode, $"the kernel refused MADV_DONTNEED (errno {Marshal.GetLastPInvokeError()}), so the probe's pages could not be made fresh.");
                    }

                    if (isHuge)
                    {
                        bestHuge = Math.Min(bestHuge, seconds);
                    }
                    else
                    {
                        bestNormal = Math.Min(bestNormal, seconds);
                    }
                }
            }

            double fraction = HugePageProbe.Query((nint)huge, size, SystemHugePageSource.Instance).HugePageFraction;
            return HugePageMeasurement.Decide(mode, PerGiB(bestNormal), PerGiB(bestHuge), fraction, ProbeBytes, Rounds);
        }
        finally
        {
            // The advice stays with the virtual memory jemalloc reuses: in mode always, memory asked
            // for nothing gets huge pages, so the 4 KiB probe's refusal is undone (in mode madvise,
            // no advice and MADV_NOHUGEPAGE both mean 4 KiB pages).
            if (mode == TransparentHugePageMode.Always)
            {
                _ = Libc.Madvise((nint)normal, size, Libc.MadvHugePage);
            }

            NativeAllocator.Free(huge, size, flags);
            NativeAllocator.Free(normal, size, flags);
        }
    }

    // Milliseconds per GiB of a probe touched in this many seconds; 0 (not timed) when the clock saw nothing.
    private static double PerGiB(double seconds) =>
        seconds > 0 && !double.IsInfinity(seconds) ? seconds * 1000 * BytesPerGiB / ProbeBytes : 0;

    // Drops the probe's pages, then writes it whole and returns the seconds taken; -1 when the pages cannot be dropped.
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    private static double TouchFresh(void* probe, nuint size)
    {
        if (Libc.Madvise((nint)probe, size, Libc.MadvDontNeed) != 0)
        {
            return -1;
        }

        long start = Stopwatch.GetTimestamp();
        NativeMemory.Fill(probe, size, 0x5A);
        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }
}
