using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// An array indexed by <see cref="long"/> in one contiguous native allocation: it can hold more than
/// 2^31 elements, up to the memory available. Freed by
/// <see cref="System.Runtime.InteropServices.SafeHandle.Dispose()"/> or, if leaked, by the finalizer.
/// </summary>
/// <typeparam name="T">Any unmanaged struct implementing <see cref="IEquatable{T}"/>.</typeparam>
public sealed class HugeArray<T> : HugeBuffer<T>
    where T : unmanaged, IEquatable<T>
{
    /// <summary>
    /// Allocates <paramref name="length"/> zero-filled elements with the default options: on
    /// transparent huge pages from <see cref="HugePagePolicy.ThresholdBytes"/> (2 MiB) up, where the
    /// kernel offers them.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public HugeArray(long length)
        : base(length, options: null)
    {
    }

    /// <summary>Allocates <paramref name="length"/> zero-filled elements with the given options (e.g. <see cref="AllocationOptions.WithHugePages"/>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public HugeArray(long length, AllocationOptions options)
        : base(length, options)
    {
    }

    /// <summary>
    /// Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, with the
    /// default options. Faster than <c>new HugeArray&lt;T&gt;(length)</c> followed by <c>Fill</c>: the
    /// memory is written once, not cleared first (big arrays are written with streaming stores).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public HugeArray(long length, T value)
        : base(length, value, options: null)
    {
    }

    /// <summary>Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, with the given options (written once, not cleared first).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public HugeArray(long length, T value, AllocationOptions options)
        : base(length, value, options)
    {
    }

    /// <summary>Takes over a block the ledger records (see <see cref="NativeBufferWriterExtensions.DetachToHugeArray{T}"/>).</summary>
    internal unsafe HugeArray(LedgerBlock adopted, T* pointer, long length)
        : base(adopted, pointer, length)
    {
    }

}
