using jemalloc.HugePages;
using jemalloc.Internal;

namespace jemalloc;

// The queries of a structure: a part of HugePageInfo in the structures' layer, since the kernel-facing
// part sits below the ledger.
public static unsafe partial class HugePageInfo
{
    /// <summary>Reports how a <see cref="HugeArray{T}"/> (or other <see cref="HugeBuffer{T}"/>) is backed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The buffer has been freed.</exception>
    public static HugePageReport Query<T>(HugeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        return QueryAllocation(buffer.Handle, TypeNames.Of(buffer.GetType()));
    }

    /// <summary>Reports how a <see cref="SafeArray{T}"/> (or other <see cref="SafeBuffer{T}"/>) is backed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The buffer has been freed.</exception>
    public static HugePageReport Query<T>(SafeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        return QueryAllocation(buffer.Handle, TypeNames.Of(buffer.GetType()));
    }

    // Leased while its pages are read, as the library's own operations are, so no thread can free it
    // meanwhile and no caller's extra Release() can end the hold.
    private static HugePageReport QueryAllocation(in AllocationHandle handle, string ownerName)
    {
        AllocationLedger.EnterLease(handle, ownerName);
        try
        {
            (nint address, nuint size) = AllocationLedger.Describe(handle);
            return Query(address, size, SystemHugePageSource.Instance);
        }
        finally
        {
            AllocationLedger.ExitLease(handle);
        }
    }
}
