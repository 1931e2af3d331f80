namespace jemalloc.Parquet.Internal;

/// <summary>
/// Native memory held for one column's read or write: a lease on a column's structure, or on a
/// scratch block made for the job and freed with it, and the address of its first element. A
/// column without such a structure (no bitmap, no narrowing) gets none: <see cref="Pointer"/> is null.
/// </summary>
internal readonly unsafe ref struct LeasedBlock<T>
    where T : unmanaged, IEquatable<T>
{
    private readonly MemoryLease<T> _lease;
    private readonly SafeArray<T>? _scratch;
    private readonly T* _pointer;

    private LeasedBlock(NativeBuffer<T> buffer, SafeArray<T>? scratch)
    {
        _lease = buffer.Lease();
        _scratch = scratch;
        _pointer = (T*)_lease.Pointer;
    }

    /// <summary>The first element, or null when there is no block.</summary>
    internal T* Pointer => _pointer;

    /// <summary>Leases <paramref name="buffer"/>; no block when it is null.</summary>
    /// <exception cref="ObjectDisposedException"><paramref name="buffer"/> was disposed.</exception>
    internal static LeasedBlock<T> Of(NativeBuffer<T>? buffer) => buffer is null ? default : new(buffer, null);

    /// <summary>A new scratch block of <paramref name="length"/> elements, leased, when <paramref name="needed"/>; no block otherwise.</summary>
    /// <exception cref="OutOfMemoryException">The block cannot be allocated.</exception>
    internal static LeasedBlock<T> Scratch(bool needed, int length, AllocationOptions options)
    {
        if (!needed)
        {
            return default;
        }

        var block = new SafeArray<T>(length, options);
        try
        {
            return new LeasedBlock<T>(block, block);
        }
        catch
        {
            block.Dispose();
            throw;
        }
    }

    /// <summary>Ends the lease, then frees the scratch block if this made one.</summary>
    public void Dispose()
    {
        _lease.Dispose();
        _scratch?.Dispose();
    }
}
