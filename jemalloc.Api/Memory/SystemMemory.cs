using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Runtime.CompilerServices;
using jemalloc.Interop;
using jemalloc.Internal;

namespace jemalloc.Memory;

/// <summary>
/// Refuses, before jemalloc is asked, a block that cannot fit in the memory the process can get.
/// On Linux the kernel overcommits: jemalloc gets such a block, and the process is killed by the
/// OOM killer once the pages are touched, instead of seeing an exception. Only blocks of at least
/// <see cref="CheckThreshold"/> are checked; smaller ones cannot be the problem and must not pay a read.
/// </summary>
/// <remarks>
/// "Can get" is <see cref="LinuxMemoryLimits"/>' formula on Linux and the commit room on Windows.
/// Memory jemalloc holds as freed but not yet purged pages counts as used there; before refusing,
/// jemalloc is asked to purge (return) those pages and the numbers are read again, so a block that
/// fits once jemalloc lets go of its caches is not refused. Retained (purged, still mapped) pages
/// use no memory and are no concern here.
/// The check is per block: blocks that each fit may still, all touched together, exceed memory.
/// </remarks>
internal static partial class SystemMemory
{
    /// <summary>Blocks smaller than this are never checked (64 MiB).</summary>
    internal const nuint CheckThreshold = 64 << 20;

    // A reading is reused for a block only while it is this fresh and the block is at most this
    // fraction of it, and each such block is subtracted from it: the cache can only be more
    // cautious than a new reading, never let through a block a new reading would refuse.
    private const long CacheLifetimeMilliseconds = 1000;
    private const ulong CacheFraction = 8;

    private static readonly Lock CacheGate = new();
    private static ulong s_cachedBytes;
    private static long s_cachedAt = long.MinValue;

    /// <summary>Throws if a block of <paramref name="bytes"/> cannot fit in the memory the process can get.</summary>
    /// <exception cref="OutOfMemoryException">The block is bigger than the memory the process can get.</exception>
    internal static void ThrowIfCannotFit(nuint bytes) => ThrowIfCannotFit(bytes, AllocationKind.Raw, 0);

    /// <summary>As <see cref="ThrowIfCannotFit(nuint)"/>, naming the structure (its kind and element type) in the message.</summary>
    /// <exception cref="OutOfMemoryException">The block is bigger than the memory the process can get.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ThrowIfCannotFit(nuint bytes, AllocationKind kind, int elementType)
    {
        if (bytes >= CheckThreshold)
        {
            CheckBigBlock(bytes, kind, elementType);
        }
    }

    /// <summary>
    /// Throws the <see cref="OutOfMemoryException"/> for a block jemalloc could not allocate, with what
    /// the process can get when the block is big enough for that to matter.
    /// </summary>
    /// <exception cref="OutOfMemoryException">Always.</exception>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowCouldNotAllocate(nuint bytes, AllocationKind kind, int elementType)
    {
        MemoryAvailability? known = bytes >= CheckThreshold ? Query() : null;
        if (known is not { } availability)
        {
            ThrowHelper.ThrowOutOfMemory(bytes);
            return;
        }

        ThrowHelper.ThrowOutOfMemory(string.Create(CultureInfo.InvariantCulture,
            $"jemalloc could not allocate {Describe(bytes, kind, elementType)}: the process can get about {LinuxMemoryLimits.FormatGiB(availability.Bytes)} ({availability.Explanation})."));
    }

    /// <summary>A fresh reading of what the process can get, or <see langword="null"/> where it cannot be read.</summary>
    internal static MemoryAvailability? Query()
    {
        try
        {
            return OperatingSystem.IsWindows() ? QueryWindows()
                : OperatingSystem.IsLinux() ? QueryLinux()
                : null;
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>"a SafeArray&lt;S16&gt; of 34,359,738,352 bytes", or "a block of ... bytes".</summary>
    internal static string Describe(nuint bytes, AllocationKind kind, int elementType)
    {
        string element = ElementTypes.TypeOf(elementType)?.Name ?? "T";
        string what = kind switch
        {
            AllocationKind.FixedBuffer => $"FixedBuffer<{element}>",
            AllocationKind.SafeBuffer => $"SafeArray<{element}>",
            AllocationKind.HugeBuffer => $"HugeArray<{element}>",
            AllocationKind.Utf8String => "FixedUtf8String",
            AllocationKind.BufferWriter => $"NativeBufferWriter<{element}> block",
            _ => "block",
        };
        return string.Create(CultureInfo.InvariantCulture, $"a {what} of {(ulong)bytes:N0} bytes");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void CheckBigBlock(nuint bytes, AllocationKind kind, int elementType)
    {
        lock (CacheGate)
        {
            if (Environment.TickCount64 - s_cachedAt < CacheLifetimeMilliseconds && bytes <= s_cachedBytes / CacheFraction)
            {
                s_cachedBytes -= bytes;
                return;
            }
        }

        if (Query() is not { } availability)
        {
            return;
        }

        if (bytes > availability.MemoryBytes)
        {
            // jemalloc's freed but unpurged pages count as used: give them back and look again.
            PurgeJemallocCaches();
            if (Query() is not { } afterPurge)
            {
                return;
            }

            availability = afterPurge;
            if (bytes > availability.MemoryBytes)
            {
                Remember(0);
                ThrowHelper.ThrowOutOfMemory(string.Create(CultureInfo.InvariantCulture,
                    $"{Capitalize(Describe(bytes, kind, elementType))} cannot fit: the process can get about {LinuxMemoryLimits.FormatGiB(availability.Bytes)} ({availability.Explanation})."));
            }
        }

        // Left to jemalloc when only an address-space limit stops it (the kernel refuses that cleanly).
        Remember(availability.MemoryBytes > bytes ? availability.MemoryBytes - bytes : 0);
    }

    private static void Remember(ulong bytes)
    {
        lock (CacheGate)
        {
            s_cachedBytes = bytes;
            s_cachedAt = Environment.TickCount64;
        }
    }

    private static unsafe void PurgeJemallocCaches()
    {
        // arena.<MALLCTL_ARENAS_ALL>.purge: every arena's dirty and muzzy pages back to the kernel.
        fixed (byte* name = "arena.4096.purge\0"u8)
        {
            _ = JemNative.Mallctl(name, null, null, null, 0);
        }
    }

    private static string Capitalize(string text) => string.Concat(text[..1].ToUpperInvariant(), text.AsSpan(1));
}
