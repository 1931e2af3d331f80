using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;

namespace jemalloc.Internal;

/// <summary>
/// Asks the CPU to start loading a cache line that will be read soon, so that the misses of a batch
/// of random reads overlap instead of following one another.
/// </summary>
internal static unsafe class CachePrefetch
{
    /// <summary>Starts loading the line of <paramref name="address"/> into every cache level; never faults.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Line(void* address)
    {
        // Elsewhere (Arm64 has no prefetch intrinsic in .NET) the reads simply miss one after another.
        if (Sse.IsSupported)
        {
            Sse.Prefetch0(address);
        }
    }
}
