using jemalloc.HugePages;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// Tells whether memory really got transparent huge pages, instead of guessing: the kernel's mode
/// (<c>/sys/kernel/mm/transparent_hugepage/enabled</c>) and, for a range, its huge-page and resident
/// bytes from <c>/proc/self/smaps</c>. Where the OS offers no huge pages (mode <c>never</c>, a kernel
/// without them, Windows, Linux on another architecture than x64) everything still works and the
/// report says so.
/// </summary>
/// <remarks>
/// Memory asks for huge pages through <see cref="AllocationOptions.HugePages"/> or a
/// <see cref="JemArena"/> made with <c>hugePages: true</c>; the kernel assigns them when the memory is
/// first written, so query after writing. The advice belongs to the virtual memory, not to the
/// allocation: when jemalloc reuses freed advised memory for a later allocation in the same arena,
/// that allocation gets huge pages too, asked or not. Reading <c>/proc/self/smaps</c> takes
/// milliseconds in a big process: this is a diagnostic, not for hot paths.
/// <para>
/// It is the public face of the structures' layer: the kernel-facing work is done below the ledger,
/// and a structure's memory is read under a lease, so that no thread can free it meanwhile.
/// </para>
/// </remarks>
public static unsafe class HugePageInfo
{
    /// <summary>The kernel's transparent huge page mode, read now.</summary>
    public static TransparentHugePageMode Mode => HugePageProbe.Mode;

    /// <summary>Whether the OS gives transparent huge pages to memory that asks for them (mode <c>madvise</c> or <c>always</c>).</summary>
    public static bool IsAvailable => HugePageProbe.IsAvailable;

    /// <summary>Reports how the range from <paramref name="address"/> of <paramref name="length"/> bytes is backed.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero, or the range wraps around the address space.</exception>
    /// <exception cref="ArgumentException">Part of the range is not mapped in this process (checked where <c>/proc/self/smaps</c> can be read).</exception>
    public static HugePageReport Query(void* address, nuint length) => HugePageProbe.Query((nint)address, length, SystemHugePageSource.Instance);

    /// <summary>Reports how the range from <paramref name="address"/> of <paramref name="length"/> bytes is backed.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero, or the range wraps around the address space.</exception>
    /// <exception cref="ArgumentException">Part of the range is not mapped in this process (checked where <c>/proc/self/smaps</c> can be read).</exception>
    public static HugePageReport Query(nint address, nuint length) => HugePageProbe.Query(address, length, SystemHugePageSource.Instance);

    /// <summary>Reports how a <see cref="HugeArray{T}"/> (or other <see cref="HugeBuffer{T}"/>) is backed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The buffer has been freed.</exception>
    public static HugePageReport Query<T>(HugeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        return QueryAllocation(buffer.Block, TypeNames.Of(buffer.GetType()));
    }

    /// <summary>Reports how a <see cref="SafeArray{T}"/> (or other <see cref="SafeBuffer{T}"/>) is backed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The buffer has been freed.</exception>
    public static HugePageReport Query<T>(SafeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        return QueryAllocation(buffer.Block, TypeNames.Of(buffer.GetType()));
    }

    // Leased while its pages are read, as the library's own operations are, so no thread can free it
    // meanwhile and no caller's extra Release() can end the hold.
    private static HugePageReport QueryAllocation(LedgerBlock block, string ownerName)
    {
        using LedgerBlock.LeaseScope lease = block.Lease(ownerName);
        return HugePageProbe.Query(lease.Address, lease.Size, SystemHugePageSource.Instance);
    }
}
