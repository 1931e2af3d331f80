using System.Runtime.CompilerServices;

namespace jemalloc.Ledger;

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

    /// <summary>
    /// A slot's key word: the generation's complement (high half) and a FixedBuffer's element count
    /// (low half). Added to a handle's generation bits (<see cref="KeyCheck"/>), it gives a high half
    /// of all ones exactly when the generations match, so one add and one unsigned compare check both
    /// the generation and an index. Zeroed memory decodes as generation 0xFFFFFFFF, which no handle has.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long MakeKey(uint generation, uint length = 0) => (long)((ulong)~generation << 32 | length);

    /// <summary>The generation a key word stands for.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static uint KeyGeneration(long key) => ~(uint)((ulong)key >> 32);

    /// <summary>
    /// The key word plus the handle's generation bits: at least <see cref="KeyMatch"/> exactly when the
    /// handle's generation is the key's, and then its low half is the element count.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong KeyCheck(long key, ulong handleValue) => (ulong)key + (handleValue & 0xFFFF_FFFF_0000_0000);

    /// <summary>The smallest <see cref="KeyCheck"/> of a matching handle; OR an index into it to compare against the count.</summary>
    internal const ulong KeyMatch = 0xFFFF_FFFF_0000_0000;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsLive(long state) => (Generation(state) & 1) == 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Acquisitions(long state) => (int)(state & AcquireMask);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Leases(long state) => (int)((state & LeaseMask) >> LeaseShift);
}
