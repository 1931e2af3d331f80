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
/// earlier). Both are dropped first (<c>MADV_DONTNEED</c>), so that pages jemalloc kept resident fault
/// again, then written slice by slice, as filling a new array does, the two probes taking turns and
/// alternating which goes first.
/// </summary>
/// <remarks>
/// Every slice is memory the probe never touched before, and the cost is the whole probe's (all its
/// slices), not its best slice: the kernel hands a freshly freed huge page back cheaply, but a big
/// load needs huge pages the kernel must make anew, which on some hosts (a virtual machine whose
/// free memory is reported to the host, for one) costs many times more. Touching the same memory again
/// after dropping it, or keeping the best slice, would measure only the cheap case.
/// </remarks>
internal static unsafe class FirstTouchProbe
{
    /// <summary>Each slice: eight huge pages, enough for the fault cost to dominate the timer's.</summary>
    internal const long SliceBytes = 16L << 20;

    /// <summary>Slices per probe (turns of each page size).</summary>
    internal const int Rounds = 4;

    /// <summary>Each probe's size.</summary>
    internal const long ProbeBytes = SliceBytes * Rounds;

    /// <summary>
    /// The memory the process must be able to get for the probes to be touched: sixteen times theirs, so
    /// that in a small container the measurement never brings the process near its limit.
    /// </summary>
    internal const long MinimumAvailableBytes = 16 * 2 * ProbeBytes;

    private const double BytesPerGiB = 1L << 30;

    /// <summary>Whether <paramref name="available"/> (null when unknown) leaves room for the probes.</summary>
    internal static bool CanSpareProbes(MemoryAvailability? available) =>
        available is not { } known || known.Bytes >= MinimumAvailableBytes;

    /// <summary>Measures both probes in kernel mode <paramref name="mode"/> (madvise or always) and decides.</summary>
    internal static HugePageMeasurement Measure(TransparentHugePageMode mode)
    {
        if (!OperatingSystem.IsLinux())
        {
            return HugePageMeasurement.NotMeasured(mode, "this OS offers no transparent huge pages to this library.");
        }

        if (!CanSpareProbes(SystemMemory.Query()))
        {
            return HugePageMeasurement.NotMeasured(mode, $"the process can get less than {MinimumAvailableBytes >> 30} GiB, too little to touch two {ProbeBytes >> 20} MiB probes.");
        }

        nuint size = (nuint)ProbeBytes;
        int flags = HugePageAdvisor.AlignFlags(0);
        byte* normal;
        byte* huge;
        try
        {
            normal = (byte*)NativeAllocator.Allocate(size, flags, hugePages: false, zero: false);
        }
        catch (OutOfMemoryException)
        {
            return HugePageMeasurement.NotMeasured(mode, "the probe's memory could not be had.");
        }

        try
        {
            huge = (byte*)NativeAllocator.Allocate(size, flags, hugePages: true, zero: false);
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

            if (Libc.Madvise((nint)normal, size, Libc.MadvDontNeed) != 0 || Libc.Madvise((nint)huge, size, Libc.MadvDontNeed) != 0)
            {
                return HugePageMeasurement.NotMeasured(mode, $"the kernel refused MADV_DONTNEED (errno {Marshal.GetLastPInvokeError()}), so the probe's pages could not be made fresh.");
            }

            double normalSeconds = 0;
            double hugeSeconds = 0;
            for (int round = 0; round < Rounds; round++)
            {
                bool hugeFirst = (round & 1) != 0;
                for (int turn = 0; turn < 2; turn++)
                {
                    bool isHuge = (turn == 0) == hugeFirst;
                    double seconds = Touch((isHuge ? huge : normal) + (round * SliceBytes), (nuint)SliceBytes);
                    if (isHuge)
                    {
                        hugeSeconds += seconds;
                    }
                    else
                    {
                        normalSeconds += seconds;
                    }
                }
            }

            double fraction = HugePageProbe.Query((nint)huge, size, SystemHugePageSource.Instance).HugePageFraction;
            return HugePageMeasurement.Decide(mode, PerGiB(normalSeconds), PerGiB(hugeSeconds), fraction, ProbeBytes, Rounds);
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

    // Milliseconds per GiB of a whole probe written in this many seconds; 0 (not timed) when the clock saw nothing.
    private static double PerGiB(double seconds) => seconds > 0 ? seconds * 1000 * BytesPerGiB / ProbeBytes : 0;

    // Writes the slice whole (its first touch: the probe dropped its pages) and returns the seconds taken.
    private static double Touch(byte* slice, nuint size)
    {
        long start = Stopwatch.GetTimestamp();
        NativeMemory.Fill(slice, size, 0x5A);
        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }
}
