using System.Diagnostics.CodeAnalysis;
using System.Collections;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// The base of array-like structures indexed by <see cref="long"/>: more than 2^31 elements in one
/// contiguous jemalloc allocation, owned by a <see cref="SafeHandle"/> like <see cref="SafeBuffer{T}"/>.
/// Bulk work goes through spans of at most <see cref="DefaultChunkLength"/> elements (see <see cref="GetChunks()"/>).
/// </summary>
/// <typeparam name="T">Any unmanaged struct implementing <see cref="IEquatable{T}"/>.</typeparam>
public abstract unsafe class HugeBuffer<T> : SafeHandle, IEnumerable<T>, IAllocationOwner
    where T : unmanaged, IEquatable<T>
{
    private readonly T* _pointer;
    private readonly long _length;
    private readonly AllocationHandle _handle;
    // The length the indexer checks against: Length while the memory is live, 0 once it is not.
    // One field of this object is cheaper to check on every access than the ledger's state word
    // (which it mirrors: set to 0 on dispose, finalization and arena invalidation).
    private long _accessibleLength;

    /// <summary>Allocates <paramref name="length"/> zero-filled elements.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment, thread cache and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    protected HugeBuffer(long length, AllocationOptions options)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        if (length <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, "A HugeBuffer must have at least one element.");
        }

        if ((ulong)length > (ulong)nint.MaxValue / (ulong)sizeof(T))
        {
            ThrowHelper.ThrowSizeOverflow(length, sizeof(T));
        }

        var zeroed = options with { Flags = options.Flags | MallocxFlags.Zero };
        _pointer = (T*)AllocationLedger.Allocate((nuint)length * (nuint)sizeof(T), zeroed, AllocationKind.HugeBuffer, typeof(T), out _handle);
        _length = length;
        _accessibleLength = length;
        SetHandle((nint)_pointer);
        if (options.Flags.ArenaIndex is not null)
        {
            // Only an arena reset can invalidate the memory without going through this object.
            AllocationLedger.AttachOwner(_handle, this);
        }
    }

    /// <summary>The largest span handed out by the chunked operations: 1 GiB worth of elements.</summary>
    public int DefaultChunkLength => Math.Max(1, (1 << 30) / sizeof(T));

    /// <summary>The number of elements.</summary>
    public long Length => _length;

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
    public ref T this[long index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            // One load and one compare: the accessible length is 0 once the memory is gone, and the
            // throw helper then tells a freed array from a bad index. The throw is out of line.
            if ((ulong)index >= (ulong)_accessibleLength)
            {
                ThrowHelper.ThrowIndexFailure(index, _length, _handle, this);
            }

            return ref _pointer[index];
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

    /// <summary>A part of the array as a span. Acquire the array while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the array.</exception>
    public Span<T> AsSpan(long start, int length)
    {
        ThrowIfInvalid();
        CheckRange(start, length, nameof(start));
        return new Span<T>(_pointer + start, length);
    }

    /// <summary>Sets every element to <paramref name="value"/>, chunk by chunk.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public void Fill(T value)
    {
        Acquire();
        try
        {
            foreach (Span<T> chunk in GetChunks())
            {
                chunk.Fill(value);
            }
        }
        finally
        {
            Release();
        }
    }

    /// <summary>Copies <paramref name="source"/> into the array, starting at element <paramref name="destinationIndex"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The source does not fit in the array at that index.</exception>
    public void CopyFrom(ReadOnlySpan<T> source, long destinationIndex)
    {
        ThrowIfInvalid();
        CheckRange(destinationIndex, source.Length, nameof(destinationIndex));
        source.CopyTo(new Span<T>(_pointer + destinationIndex, source.Length));
    }

    /// <summary>Copies <c>destination.Length</c> elements, starting at element <paramref name="sourceIndex"/>, into <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The array has fewer than <c>destination.Length</c> elements from that index.</exception>
    public void CopyTo(Span<T> destination, long sourceIndex)
    {
        ThrowIfInvalid();
        CheckRange(sourceIndex, destination.Length, nameof(sourceIndex));
        new ReadOnlySpan<T>(_pointer + sourceIndex, destination.Length).CopyTo(destination);
    }

    /// <summary>
    /// The whole array as consecutive spans of at most <see cref="DefaultChunkLength"/> elements, for
    /// <c>foreach (Span&lt;T&gt; chunk in array.GetChunks())</c>. Each step checks the array; acquire it
    /// while you work on a chunk if another thread might dispose it.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public ChunkEnumerator GetChunks() => GetChunks(DefaultChunkLength);

    /// <summary>The whole array as consecutive spans of at most <paramref name="maxChunkLength"/> elements.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is zero or negative.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public ChunkEnumerator GetChunks(int maxChunkLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxChunkLength);
        ThrowIfInvalid();
        return new ChunkEnumerator(this, maxChunkLength);
    }

    /// <summary>
    /// Adds one to the array's reference count: until the matching <see cref="Release"/>, disposing it
    /// throws. Use it while a span or pointer to it is in use, or while another thread uses it.
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

    private void CheckRange(long start, int count, string paramName) => BufferGuard.CheckRange(start, count, _length, paramName, "array");

    /// <summary>Walks a <see cref="HugeBuffer{T}"/> as consecutive spans; use with <see langword="foreach"/>.</summary>
    public ref struct ChunkEnumerator
    {
        private readonly HugeBuffer<T> _buffer;
        private readonly int _maxChunkLength;
        private long _next;
        private Span<T> _current;

        internal ChunkEnumerator(HugeBuffer<T> buffer, int maxChunkLength)
        {
            _buffer = buffer;
            _maxChunkLength = maxChunkLength;
        }

        /// <summary>The current chunk.</summary>
        public readonly Span<T> Current => _current;

        /// <summary>The index in the array of the current chunk's first element.</summary>
        public readonly long CurrentOffset => _next - _current.Length;

        /// <summary>Returns this enumerator, so <see cref="GetChunks()"/> can be used in <see langword="foreach"/>.</summary>
        public readonly ChunkEnumerator GetEnumerator() => this;

        /// <summary>Moves to the next chunk.</summary>
        /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
        public bool MoveNext()
        {
            _buffer.ThrowIfInvalid();
            long remaining = _buffer._length - _next;
            if (remaining <= 0)
            {
                _current = default;
                return false;
            }

            int count = (int)Math.Min(remaining, _maxChunkLength);
            _current = new Span<T>(_buffer._pointer + _next, count);
            _next += count;
            return true;
        }
    }

    /// <summary>The ledger invalidated the memory (an arena reset): every later access throws.</summary>
    void IAllocationOwner.OnInvalidated() => _accessibleLength = 0;

    /// <summary>Enumerates a <see cref="HugeBuffer{T}"/>, checking at each step that it was not disposed.</summary>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly HugeBuffer<T> _buffer;
        private long _index;

        internal Enumerator(HugeBuffer<T> buffer)
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
