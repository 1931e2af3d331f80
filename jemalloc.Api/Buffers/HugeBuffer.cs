using System.Runtime.CompilerServices;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// The base of array-like structures indexed by <see cref="long"/>: more than 2^31 elements in one
/// contiguous jemalloc allocation, with a <see cref="System.Runtime.InteropServices.SafeHandle"/>'s
/// lifetime (see <see cref="NativeBuffer{T}"/>). Bulk work on the memory goes through the spans of a
/// lease: <c>foreach (Span&lt;T&gt; chunk in lease.GetChunks())</c>.
/// </summary>
/// <typeparam name="T">Any unmanaged struct implementing <see cref="IEquatable{T}"/>.</typeparam>
public abstract unsafe class HugeBuffer<T> : NativeBuffer<T>
    where T : unmanaged, IEquatable<T>
{
    /// <summary>Allocates <paramref name="length"/> zero-filled elements.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed its arena's budget.</exception>
    protected HugeBuffer(long length, AllocationOptions options)
        : base(length, options, AllocationKind.HugeBuffer)
    {
    }

    /// <summary>Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, without clearing them first.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="value">The value of every element.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed its arena's budget.</exception>
    protected HugeBuffer(long length, T value, AllocationOptions options)
        : base(length, options, AllocationKind.HugeBuffer, value)
    {
    }

    /// <inheritdoc/>
    private protected sealed override string TypeName => "HugeArray";

    /// <summary>Takes over a block the ledger records (see <see cref="NativeBufferWriterExtensions.DetachToHugeArray{T}"/>).</summary>
    // Options null: HugePagePolicy chooses them (see NativeBuffer).
    private protected HugeBuffer(long length, AllocationOptions? options)
        : base(length, options, AllocationKind.HugeBuffer)
    {
    }

    private protected HugeBuffer(long length, T value, AllocationOptions? options)
        : base(length, options, AllocationKind.HugeBuffer, value)
    {
    }

    private protected HugeBuffer(LedgerBlock adopted, T* pointer, long length)
        : base(adopted, pointer, length, AllocationKind.HugeBuffer)
    {
    }

    /// <summary>The number of elements.</summary>
    public long Length => _length;

    /// <summary>The element at <paramref name="index"/>, read or written in place.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public T this[long index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            if ((ulong)index >= (ulong)_accessibleLength)
            {
                ThrowIndexFailure(index);
            }

            T value = _pointer[index];
            // The object must outlive the read: a finalizer run in between would free the memory.
            GC.KeepAlive(this);
            return value;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        set
        {
            if ((ulong)index >= (ulong)_accessibleLength)
            {
                ThrowIndexFailure(index);
            }

            _pointer[index] = value;
            GC.KeepAlive(this);
        }
    }

    /// <summary>Copies <paramref name="source"/> into the array, starting at element <paramref name="destinationIndex"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The source does not fit in the array at that index.</exception>
    public void CopyFrom(ReadOnlySpan<T> source, long destinationIndex)
    {
        using MemoryLease<T> lease = BeginOperation();
        Simd.SimdKernels.Copy(source, lease.AsSpan(destinationIndex, source.Length));
    }

    /// <summary>Copies <c>destination.Length</c> elements, starting at element <paramref name="sourceIndex"/>, into <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The array has fewer than <c>destination.Length</c> elements from that index.</exception>
    public void CopyTo(Span<T> destination, long sourceIndex)
    {
        using MemoryLease<T> lease = BeginOperation();
        Simd.SimdKernels.Copy(lease.AsSpan(sourceIndex, destination.Length), destination);
    }

    /// <summary>
    /// Copies the elements at <paramref name="indices"/> into <paramref name="destination"/> (element
    /// <c>indices[i]</c> to <c>destination[i]</c>) under one lease: for random reads, every index is
    /// checked first and all the elements are fetched from memory together, instead of one cache miss
    /// after another through the indexer.
    /// </summary>
    /// <remarks>
    /// Each index is read once more where its element is copied, and checked again there, so another
    /// thread that changes <paramref name="indices"/> meanwhile can only make the call throw, never
    /// make it read outside the array; <paramref name="destination"/> then holds the elements copied
    /// before the changed index.
    /// </remarks>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <paramref name="indices"/>.</exception>
    /// <exception cref="IndexOutOfRangeException">An index is negative or not less than <see cref="Length"/> (nothing is copied, unless another thread changed the indices during the call).</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public void Gather(ReadOnlySpan<long> indices, Span<T> destination)
    {
        if (destination.Length < indices.Length)
        {
            Internal.ThrowHelper.ThrowArgument(nameof(destination), $"The destination ({destination.Length}) must be at least as long as the indices ({indices.Length}).");
        }

        using MemoryLease<T> lease = BeginOperation();
        T* first = (T*)lease.Pointer;
        foreach (long index in indices)
        {
            if ((ulong)index >= (ulong)_length)
            {
                ThrowIndexFailure(index);
            }

            Internal.CachePrefetch.Line(first + index);
        }

        // The caller owns the indices and another thread may change them after the pass above: each
        // is read once here and that value is the one checked and used.
        for (int i = 0; i < indices.Length; i++)
        {
            long index = indices[i];
            if ((ulong)index >= (ulong)_length)
            {
                ThrowIndexFailure(index);
            }

            destination[i] = first[index];
        }
    }
}
