using System.Diagnostics.CodeAnalysis;
using System.Collections;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// The base of array-like structures of up to <see cref="int.MaxValue"/> elements in native memory
/// allocated by jemalloc, owned by a <see cref="SafeHandle"/>: the memory is freed exactly once, by
/// <see cref="SafeHandle.Dispose()"/> or by the finalizer if the object is leaked, and a native call
/// that marshals the handle keeps the memory alive until it returns.
/// </summary>
/// <typeparam name="T">Any unmanaged struct, including user structs holding <see cref="FixedBuffer{T}"/> or <see cref="FixedUtf8String"/> fields.</typeparam>
/// <remarks>
/// Every element access checks the allocation in the <see cref="AllocationLedger"/> (one load and one
/// compare) and the index. Disposing while <see cref="Acquire"/>d throws; disposing again does nothing.
/// Freeing this array does not free <see cref="FixedBuffer{T}"/>s stored in its elements.
/// </remarks>
public abstract unsafe class SafeBuffer<T> : SafeHandle, IEnumerable<T>, IAllocationOwner
    where T : unmanaged, IEquatable<T>
{
    private readonly T* _pointer;
    private readonly int _length;
    private readonly AllocationHandle _handle;
    // The length the indexer checks against: Length while the memory is live, 0 once it is not.
    // One field of this object is cheaper to check on every access than the ledger's state word
    // (which it mirrors: set to 0 on dispose, finalization and arena invalidation).
    private int _accessibleLength;
    private SafeBufferMemoryManager<T>? _memoryManager;

    /// <summary>Allocates <paramref name="length"/> zero-filled elements.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment, thread cache and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    protected SafeBuffer(int length, AllocationOptions options)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        if (length <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, "A SafeBuffer must have at least one element.");
        }

        var zeroed = options with { Flags = options.Flags | MallocxFlags.Zero };
        _pointer = (T*)AllocationLedger.Allocate((nuint)length * (nuint)sizeof(T), zeroed, AllocationKind.SafeBuffer, typeof(T), out _handle);
        _length = length;
        _accessibleLength = length;
        SetHandle((nint)_pointer);
        if (options.Flags.ArenaIndex is not null)
        {
            // Only an arena reset can invalidate the memory without going through this object.
            AllocationLedger.AttachOwner(_handle, this);
        }
    }

    /// <summary>The number of elements.</summary>
    public int Length => _length;

    /// <summary>Whether the memory is still allocated: not disposed, finalized or invalidated by an arena reset.</summary>
    public bool IsValid => _handle.IsValid;

    /// <summary>Whether the handle holds no memory; only before construction completes.</summary>
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>The ledger handle of the memory.</summary>
    public AllocationHandle Handle => _handle;

    /// <summary>How many <see cref="Acquire"/> calls are not yet released, or -1 once disposed.</summary>
    public int AcquireCount => _handle.AcquireCount;

    /// <summary>A reference to the element at <paramref name="index"/>: reading copies, a <see langword="ref"/> local aliases the memory.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public ref T this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            // One load and one compare: the accessible length is 0 once the memory is gone, and the
            // throw helper then tells a freed array from a bad index. The throw is out of line.
            if ((uint)index >= (uint)_accessibleLength)
            {
                ThrowHelper.ThrowIndexFailure(index, _length, _handle, this);
            }

            // Non-negative after the check: zero-extending is free where sign-extending is not.
            return ref _pointer[(uint)index];
        }
    }

    /// <summary>The whole array as a span. Acquire the array while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public Span<T> Span
    {
        get
        {
            ThrowIfInvalid();
            return new Span<T>(_pointer, _length);
        }
    }

    /// <summary>
    /// The array as <see cref="Memory{T}"/>, e.g. for asynchronous I/O. Each access to its span checks
    /// the array; pinning it acquires the array until the pin is released.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public Memory<T> Memory
    {
        get
        {
            ThrowIfInvalid();
            return (_memoryManager ??= new SafeBufferMemoryManager<T>(this)).Memory;
        }
    }

    /// <summary>The raw address of the first element, for native calls. Acquire the array for the duration of the call.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public nint Pointer
    {
        get
        {
            ThrowIfInvalid();
            return (nint)_pointer;
        }
    }

    /// <summary>The whole array as a span. Acquire the array while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public Span<T> AsSpan() => Span;

    /// <summary>A part of the array as a span. Acquire the array while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the array.</exception>
    public Span<T> AsSpan(int start, int length)
    {
        ThrowIfInvalid();
        BufferGuard.CheckRange(start, length, _length, nameof(start), "array");
        return new Span<T>(_pointer + start, length);
    }

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public void Fill(T value) => Span.Fill(value);

    /// <summary>Copies every element to <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the array.</exception>
    public void CopyTo(Span<T> destination)
    {
        BufferGuard.CheckDestination(destination.Length, _length, "array");
        Span.CopyTo(destination);
    }

    /// <summary>Copies <paramref name="source"/> into the array, starting at <paramref name="destinationIndex"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The source does not fit in the array at that index.</exception>
    public void CopyFrom(ReadOnlySpan<T> source, int destinationIndex = 0) => source.CopyTo(AsSpan(destinationIndex, source.Length));

    /// <summary>Copies the elements into a new managed array.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public T[] ToArray() => Span.ToArray();

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
    public bool SequenceEqual(ReadOnlySpan<T> values) => MemoryExtensions.SequenceEqual((ReadOnlySpan<T>)Span, values);

    /// <summary>
    /// Adds one to the array's reference count: until the matching <see cref="Release"/>, disposing it
    /// throws. Use it while a span, memory or pointer to it is in use, or while another thread uses it.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public void Acquire() => AllocationLedger.Acquire(_handle, GetType().Name);

    /// <summary>Takes one from the array's reference count.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    public void Release() => AllocationLedger.Release(_handle, GetType().Name);

    /// <summary>Throws if the array was disposed; otherwise does nothing.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ThrowIfInvalid() => BufferGuard.ThrowIfFreed(_handle, this);

    /// <summary>Enumerates copies of the elements, checking validity at each step.</summary>
    public Enumerator GetEnumerator() => new(this);

    IEnumerator<T> IEnumerable<T>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>The address, for callers that validated already.</summary>
    internal T* UnsafePointer => _pointer;

    /// <summary>
    /// Invalidates the array at once (every later access throws) and lets <see cref="SafeHandle"/> free
    /// the memory when no native call holds the handle any more.
    /// </summary>
    /// <exception cref="InvalidOperationException">The array is acquired (only when <paramref name="disposing"/>).</exception>
    protected override void Dispose(bool disposing)
    {
        if (BufferGuard.RetireOnDispose(this, _handle, disposing))
        {
            _accessibleLength = 0;
        }

        base.Dispose(disposing);
    }

    /// <summary>Frees the memory; called once by <see cref="SafeHandle"/>.</summary>
    protected override bool ReleaseHandle()
    {
        _accessibleLength = 0;
        AllocationLedger.FreeOwned(_handle, GetType().Name);
        return true;
    }

    /// <summary>The ledger invalidated the memory (an arena reset): every later access throws.</summary>
    void IAllocationOwner.OnInvalidated() => _accessibleLength = 0;

    /// <summary>Enumerates a <see cref="SafeBuffer{T}"/>, checking at each step that it was not disposed.</summary>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly SafeBuffer<T> _buffer;
        private int _index;

        internal Enumerator(SafeBuffer<T> buffer)
        {
            _buffer = buffer;
            _index = -1;
        }

        /// <summary>A copy of the current element.</summary>
        /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
        public readonly T Current => _buffer[_index];

        readonly object IEnumerator.Current => Current;

        /// <summary>Moves to the next element.</summary>
        /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
        public bool MoveNext()
        {
            _buffer.ThrowIfInvalid();
            return ++_index < _buffer._length;
        }

        /// <summary>Goes back to before the first element.</summary>
        public void Reset() => _index = -1;

        /// <summary>Does nothing: the enumerator owns nothing.</summary>
        public readonly void Dispose()
        {
        }
    }
}
