using System.Runtime.InteropServices;
using jemalloc.Simd;

namespace jemalloc.Memory;

/// <summary>
/// Makes a new block read as zero without writing what is already zero. Pages the kernel has not yet
/// given the process (never touched, or purged by jemalloc) read as zero, and writing them would
/// only fault them in to store zeros: on Linux big blocks clear only their pages that are present
/// or swapped out (see <c>ZeroFill.Unix.cs</c>); everything else is cleared in full.
/// </summary>
/// <remarks>
/// <para>
/// On Windows every block is cleared in full. Freshly committed pages are zero there too, but
/// nothing cheap tells them apart from a block jemalloc reuses (<c>QueryWorkingSetEx</c> shows
/// residency, not whether a page was ever written), so no page is assumed zero.
/// </para>
/// <para>
/// This relies on jemalloc's memory being private anonymous mappings (its default extent hooks).
/// Extent hooks installed through the raw mallctl API that back arenas with files or shared memory
/// void that assumption; such memory is outside what the safe structures support.
/// </para>
/// </remarks>
internal static unsafe partial class ZeroFill
{
    /// <summary>Blocks smaller than this are cleared in full (1 MiB): looking up their pages would cost more than it saves.</summary>
    internal const nuint PageLookupThreshold = 1 << 20;

    /// <summary>Leaves <paramref name="size"/> bytes at <paramref name="address"/> reading as zero.</summary>
    internal static void ClearUnlessKnownZero(void* address, nuint size)
    {
        if (size < NonTemporalFill.MinimumBytes)
        {
            // Below the streaming floor every fill policy clears with ordinary stores: a small
            // block (a FixedBuffer's, most often) need not ask which.
            NativeMemory.Clear(address, size);
            return;
        }

        ClearLarge(address, size);
    }

    private static void ClearLarge(void* address, nuint size)
    {
        // What is cleared is written with the stores FillPolicy chose for a write of the whole block's size.
        FillKernel kernel = FillPolicy.KernelFor(size, mayMeasure: false);
        if (size >= PageLookupThreshold && OperatingSystem.IsLinux() && TryClearResidentPages((byte*)address, size, kernel))
        {
            return;
        }

        SimdKernels.Clear((byte*)address, size, kernel);
    }
}
