using System.Runtime.Versioning;
using jemalloc.Interop;
using jemalloc.Simd;

namespace jemalloc.Memory;

internal static unsafe partial class ZeroFill
{
    // /proc/self/pagemap: one 64-bit entry per virtual page; bit 63 "present in RAM", bit 62
    // "swapped out". Unprivileged readers see these bits (the frame numbers read as zero). A page
    // of a private anonymous mapping that is neither reads as zero: never touched, or dropped by
    // MADV_DONTNEED (jemalloc's purge). A huge page shows all its small pages present, and a page
    // jemalloc freed with MADV_FREE shows present until the kernel reclaims it: both get cleared.
    private const ulong PresentOrSwapped = (1UL << 63) | (1UL << 62);
    // 2048 entries (16 KiB of stack) per read: fewer system calls, still a modest stack buffer.
    private const int BatchPages = 2048;
    private const int NotOpened = -2;
    private const int Unusable = -1;

    // Opened once, on first use; pread takes an offset, so all threads share it.
    private static int s_pagemap = NotOpened;

    /// <summary>
    /// Clears the block's partial first and last pages and every whole page that is present or
    /// swapped; false (nothing cleared) when the page map cannot be used.
    /// </summary>
    [SupportedOSPlatform("linux")]
    private static bool TryClearResidentPages(byte* start, nuint size, FillKernel kernel)
    {
        int pagemap = Pagemap();
        if (pagemap < 0)
        {
            return false;
        }

        nuint pageSize = (nuint)Environment.SystemPageSize;
        byte* end = start + size;
        byte* firstWhole = (byte*)(((nuint)start + pageSize - 1) & ~(pageSize - 1));
        byte* endWhole = (byte*)((nuint)end & ~(pageSize - 1));
        if (firstWhole >= endWhole)
        {
            return false;
        }

        // The partial pages at either end may hold a neighbour's data: cleared as usual.
        SimdKernels.Clear(start, (nuint)(firstWhole - start), kernel);
        SimdKernels.Clear(endWhole, (nuint)(end - endWhole), kernel);

        ulong* entries = stackalloc ulong[BatchPages];
        nuint firstPage = (nuint)firstWhole / pageSize;
        nuint pageCount = (nuint)(endWhole - firstWhole) / pageSize;

        // Runs of pages to clear are carried across batches, so a fully present block is cleared
        // by one call, as fast as clearing it without looking.
        nuint runStart = nuint.MaxValue;
        for (nuint done = 0; done < pageCount;)
        {
            int batch = (int)Math.Min((nuint)BatchPages, pageCount - done);
            nint read = Libc.Pread(pagemap, entries, (nuint)batch * sizeof(ulong), (long)((firstPage + done) * sizeof(ulong)));
            if (read != batch * sizeof(ulong))
            {
                // Could not tell: clear the rest (and the run before it).
                nuint from = runStart == nuint.MaxValue ? done : runStart;
                SimdKernels.Clear(firstWhole + (from * pageSize), (pageCount - from) * pageSize, kernel);
                return true;
            }

            for (int i = 0; i < batch; i++)
            {
                bool mayHoldData = (entries[i] & PresentOrSwapped) != 0;
                nuint pageIndex = done + (nuint)i;
                if (mayHoldData && runStart == nuint.MaxValue)
                {
                    runStart = pageIndex;
                }
                else if (!mayHoldData && runStart != nuint.MaxValue)
                {
                    SimdKernels.Clear(firstWhole + (runStart * pageSize), (pageIndex - runStart) * pageSize, kernel);
                    runStart = nuint.MaxValue;
                }
            }

            done += (nuint)batch;
        }

        if (runStart != nuint.MaxValue)
        {
            SimdKernels.Clear(firstWhole + (runStart * pageSize), (pageCount - runStart) * pageSize, kernel);
        }

        return true;
    }

    /// <summary>The page map's descriptor, or <see cref="Unusable"/>.</summary>
    [SupportedOSPlatform("linux")]
    private static int Pagemap()
    {
        int descriptor = Volatile.Read(ref s_pagemap);
        if (descriptor != NotOpened)
        {
            return descriptor;
        }

        int opened = Libc.Open("/proc/self/pagemap", Libc.OpenReadOnlyCloseOnExec);
        if (opened >= 0 && !ReportsPresentPages(opened))
        {
            _ = Libc.Close(opened);
            opened = Unusable;
        }

        int previous = Interlocked.CompareExchange(ref s_pagemap, opened < 0 ? Unusable : opened, NotOpened);
        if (previous != NotOpened)
        {
            if (opened >= 0)
            {
                _ = Libc.Close(opened);
            }

            return previous;
        }

        return opened < 0 ? Unusable : opened;
    }

    // Trusts the page map only if it shows a page just written as present: a kernel or sandbox
    // whose page map hides the flags would otherwise make every page look zero.
    [SupportedOSPlatform("linux")]
    private static bool ReportsPresentPages(int pagemap)
    {
        byte* probe = stackalloc byte[1];
        Volatile.Write(ref *probe, 1);
        ulong entry;
        long offset = (long)((nuint)probe / (nuint)Environment.SystemPageSize * sizeof(ulong));
        return Libc.Pread(pagemap, &entry, sizeof(ulong), offset) == sizeof(ulong) && (entry & (1UL << 63)) != 0;
    }
}
