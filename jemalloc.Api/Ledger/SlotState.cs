using System.Runtime.CompilerServices;

namespace jemalloc;

/// <summary>
/// The layout of a ledger slot's 64-bit state word, changed only by compare-and-swap:
/// <list type="bullet">
/// <item>bits 63-32: the generation, odd while the slot holds a live allocation, even while it is free;</item>
/// <item>bit 31: an arena reset is deciding about the slot (no acquire, lease or free may start);</item>
/// <item>bit 30: retired by a disposed SafeHandle whose memory is not freed yet (a native call still holds it);</item>
/// <item>bits 29-15: open leases (<c>Lease()</c> and the library's own operations);</item>
/// <item>bits 14-0: <c>Acquire()</c> calls not yet released.</item>
/// </list>
/// Leases and acquisitions are counted apart so that an extra <c>Release()</c> can never cancel a lease.
/// </summary>
internal static class SlotState
{
    internal const long Resetting = 1L << 31;
    internal const long PendingFree = 1L << 30;
    internal const int LeaseShift = 15;
    internal const long OneLease = 1L << LeaseShift;
    internal const long LeaseMask = 0x7FFFL << LeaseShift;
    internal const long AcquireMask = 0x7FFFL;
    internal const int MaxCount = 0x7FFF;
    internal const long CountMask = LeaseMask | AcquireMask;

    // A slot is retired for good once its generation gets this high, so a handle kept since the
    // slot's first use can never see its generation come round again.
    internal const uint LastGeneration = 0xFFFF_FFF0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static uint Generation(long state) => (uint)((ulong)state >> 32);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long Make(uint generation, long low = 0) => (long)((ulong)generation << 32) | low;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsLive(long state) => (Generation(state) & 1) == 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Acquisitions(long state) => (int)(state & AcquireMask);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Leases(long state) => (int)((state & LeaseMask) >> LeaseShift);
}
