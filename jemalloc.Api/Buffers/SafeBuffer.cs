using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// The base of array-like structures of up to <see cref="int.MaxValue"/> elements in native memory
/// allocated by jemalloc, with a <see cref="System.Runtime.InteropServices.SafeHandle"/>'s lifetime
/// (see <see cref="NativeBuffer{T}"/>).
/// </summary>
/// <typeparam name="T">Any unmanaged struct, including user structs holding <see cref="FixedBuffer{T}"/> or <see cref="FixedUtf8String"/> fields.</typeparam>
/// <remarks>
/// Every element access checks the index and that the array is alive (one load and one compare).
/// Spans and element references come from a <see cref="NativeBuffer{T}.Lease"/>.
/// </remarks>
public abstract unsafe class SafeBuffer<T> : NativeBuffer<T>
    where T : unmanaged, IEquatable<T>
{

    /// <summary>Allocates <paramref name="length"/> zero-filled elements.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed its arena's budget.</exception>
    protected SafeBuffer(int length, AllocationOptions options)
        : base(length, options, AllocationKind.SafeBuffer)
    {
    }

    /// <summary>Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, without clearing them first.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="value">The value of every element.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed its arena's budget.</exception>
    protected SafeBuffer(int length, T value, AllocationOptions options)
        : base(length, options, AllocationKind.SafeBuffer, value)
    {
    }

    /// <inheritdoc/>
    private protected sealed override string TypeName => "SafeArray";

    /// <summary>Allocates <paramref name="length"/> elements, cleared only if <paramref name="zero"/> is set.</summary>
    // Options null: HugePagePolicy chooses them (see NativeBuffer).
    private protected SafeBuffer(int length, AllocationOptions? options, bool zero = true)
        : base(length, options, AllocationKind.SafeBuffer, zero: zero)
    {
    }

    private protected SafeBuffer(int length, T value, AllocationOptions? options)
        : base(length, options, AllocationKind.SafeBuffer, value)
    {
    }

    /// <summary>Takes over a block the ledger records (see <see cref="NativeBufferWriterExtensions.DetachToSafeArray{T}"/>).</summary>
    private protected SafeBuffer(LedgerBlock adopted, T* pointer, int length)
        : base(adopted, pointer, length, AllocationKind.SafeBuffer)
    {
    }

    /// <summary>The number of elements.</summary>
    public int Length => (int)_length;

    /// <summary>The element at <paramref name="index"/>, read or written in place.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public T this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            if ((ulong)(uint)index >= (ulong)_accessibleLength)
            {
                ThrowIndexFailure(index);
            }

            T value = _pointer[(uint)index];
            // The object must outlive the read: a finalizer run in between would free the memory.
            GC.KeepAlive(this);
            return value;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        set
        {
            if ((ulong)(uint)index >= (ulong)_accessibleLength)
            {
                ThrowIndexFailure(index);
            }

            _pointer[(uint)index] = value;
            GC.KeepAlive(this);
        }
    }

    /// <summary>Copies every element to <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the array.</exception>
    public void CopyTo(Span<T> destination)
    {
        using MemoryLease<T> lease = BeginOperation();
        RangeGuard.CheckDestination(destination.Length, _length, "array");
        Simd.SimdKernels.Copy(lease.Span, destination[..lease.Span.Length]);
    }

    /// <summary>Copies <paramref name="source"/> into the array, starting at <paramref name="destinationIndex"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The source does not fit in the array at that index.</exception>
    public void CopyFrom(ReadOnlySpan<T> source, int destinationIndex = 0)
    {
        using MemoryLease<T> lease = BeginOperation();
        Simd.SimdKernels.Copy(source, lease.AsSpan(destinationIndex, source.Length));
    }

    /// <summary>Copies the elements into a new managed array.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public T[] ToArray()
    {
        using MemoryLease<T> lease = BeginOperation();
        return Simd.SimdKernels.ToArray<T>(lease.Span);
    }

    /// <summary>Whether the array holds the same elements as <paramref name="values"/>, compared with <see cref="IEquatable{T}"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public bool EqualsArray(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        return SequenceEqual(values);
    }

    /// <summary>Whether the array holds the same elements as <paramref name="values"/>, compared with <see cref="IEquatable{T}"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public bool SequenceEqual(ReadOnlySpan<T> values)
    {
        using MemoryLease<T> lease = BeginOperation();
        return MemoryExtensions.SequenceEqual((ReadOnlySpan<T>)lease.Span, values);
    }
}
