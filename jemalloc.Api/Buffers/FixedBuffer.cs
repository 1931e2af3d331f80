using System.Diagnostics.CodeAnalysis;
using System.Collections;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A fixed-length array of a primitive type in native memory allocated by jemalloc. It is a small
/// unmanaged struct (a pointer, a length and an <see cref="AllocationHandle"/>), so it can be a field
/// of a user struct stored in a <see cref="SafeArray{T}"/>.
/// </summary>
/// <typeparam name="T">
/// A primitive type: <see cref="bool"/>, <see cref="byte"/>, <see cref="sbyte"/>, <see cref="short"/>,
/// <see cref="ushort"/>, <see cref="int"/>, <see cref="uint"/>, <see cref="long"/>, <see cref="ulong"/>,
/// <see cref="nint"/>, <see cref="nuint"/>, <see cref="char"/>, <see cref="double"/> or <see cref="float"/>.
/// </typeparam>
/// <remarks>
/// <para>
/// Copying the struct copies the reference to the memory, not the memory: every copy reads and
/// writes the same elements, and after <see cref="Free"/> through any copy every access through any
/// copy throws <see cref="ObjectDisposedException"/> (an <see cref="InvalidOperationException"/>).
/// </para>
/// <para>
/// Spans returned by <see cref="Span"/>, <see cref="AsSpan()"/> and <see cref="Slice"/> are not
/// checked on each access: <see cref="Acquire"/> the buffer while you hold one so that it cannot be
/// freed under you. <see langword="default"/> is an empty buffer that owns no memory.
/// </para>
/// </remarks>
public readonly unsafe struct FixedBuffer<T> : IEquatable<FixedBuffer<T>>, IEnumerable<T>
    where T : unmanaged
{
    private const string TypeName = "FixedBuffer";

    private readonly T* _pointer;
    private readonly int _length;
    private readonly AllocationHandle _handle;

    /// <summary>Allocates a zero-filled buffer of <paramref name="length"/> elements with the default options.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedBuffer(int length)
        : this(length, AllocationOptions.Default)
    {
    }

    /// <summary>Allocates a zero-filled buffer of <paramref name="length"/> elements with the given options.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment, thread cache and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedBuffer(int length, AllocationOptions options)
    {
        ThrowIfNotPrimitive();
        if (length <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, "A FixedBuffer must have at least one element.");
        }

        var zeroed = options with { Flags = options.Flags | MallocxFlags.Zero };
        _pointer = (T*)AllocationLedger.Allocate((nuint)length * (nuint)sizeof(T), zeroed, AllocationKind.FixedBuffer, typeof(T), out _handle);
        _length = length;
    }

    /// <summary>Allocates a buffer holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedBuffer(T[] values)
        : this(new ReadOnlySpan<T>(values ?? throw new ArgumentNullException(nameof(values))))
    {
    }

    /// <summary>Allocates a buffer holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedBuffer(ReadOnlySpan<T> values)
        : this(values.Length)
    {
        values.CopyTo(new Span<T>(_pointer, _length));
    }

    /// <summary>The number of elements; 0 for <see langword="default"/>. Still readable after the buffer is freed.</summary>
    public int Length => _length;

    /// <summary>Whether the memory is still allocated (no copy has freed it). <see langword="false"/> for <see langword="default"/>.</summary>
    public bool IsValid => _handle.IsValid;

    /// <summary>The ledger handle shared by every copy of this buffer.</summary>
    public AllocationHandle Handle => _handle;

    /// <summary>How many <see cref="Acquire"/> calls are not yet released, or -1 once freed.</summary>
    public int AcquireCount => _handle.AcquireCount;

    /// <summary>A reference to the element at <paramref name="index"/>: reading copies, a <see langword="ref"/> local aliases the memory.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The buffer was freed through this or another copy.</exception>
    public ref T this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            // The bounds check first, as a span's, which the JIT removes in loops that run up to
            // Length; it also rejects a default structure (length 0), so the validity check after it
            // needs no null test and is one load and one compare. Its throw is out of line.
            ref T element = ref MemoryMarshal.CreateSpan(ref Unsafe.AsRef<T>(_pointer), _length)[index];
            if (!_handle.IsLive)
            {
                ThrowHelper.ThrowFreed(TypeName);
            }

            return ref element;
        }
    }

    /// <summary>The whole buffer as a span. Acquire the buffer while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public Span<T> Span
    {
        get
        {
            ThrowIfInvalid();
            return new Span<T>(_pointer, _length);
        }
    }

    /// <summary>The raw address of the first element, for native calls. Acquire the buffer for the duration of the call.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public nint Pointer
    {
        get
        {
            ThrowIfInvalid();
            return (nint)_pointer;
        }
    }

    /// <summary>The whole buffer as a span. Acquire the buffer while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public Span<T> AsSpan() => Span;

    /// <summary>A part of the buffer as a span. Acquire the buffer while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the buffer.</exception>
    public Span<T> AsSpan(int start, int length) => Slice(start, length);

    /// <summary>A part of the buffer as a span. Acquire the buffer while you hold the span.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the buffer.</exception>
    public Span<T> Slice(int start, int length)
    {
        ThrowIfInvalid();
        BufferGuard.CheckRange(start, length, _length, nameof(start), "buffer");
        return new Span<T>(_pointer + start, length);
    }

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public void Fill(T value) => Span.Fill(value);

    /// <summary>Copies every element to <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the buffer.</exception>
    public void CopyTo(Span<T> destination)
    {
        BufferGuard.CheckDestination(destination.Length, _length, "buffer");
        Span.CopyTo(destination);
    }

    /// <summary>Copies the elements into a new managed array.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public T[] ToArray() => Span.ToArray();

    /// <summary>Whether the buffer holds exactly the elements of <paramref name="other"/>, compared bit for bit (so a NaN equals the same NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public bool SequenceEqual(ReadOnlySpan<T> other) => MemoryExtensions.SequenceEqual<byte>(
        System.Runtime.InteropServices.MemoryMarshal.AsBytes<T>(Span), System.Runtime.InteropServices.MemoryMarshal.AsBytes(other));

    /// <summary>
    /// Adds one to the buffer's reference count: until the matching <see cref="Release"/>, freeing it
    /// through any copy throws. Use it while a span or pointer to the memory is in use, or while the
    /// buffer is shared with another thread.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public void Acquire() => AllocationLedger.Acquire(_handle, TypeName);

    /// <summary>Takes one from the buffer's reference count.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    public void Release() => AllocationLedger.Release(_handle, TypeName);

    /// <summary>Frees the memory; every copy of the buffer becomes invalid.</summary>
    /// <exception cref="ObjectDisposedException">It was already freed (through any copy).</exception>
    /// <exception cref="InvalidOperationException">It is acquired.</exception>
    public void Free() => AllocationLedger.Free(_handle, TypeName);

    /// <summary>Throws if the buffer was freed; otherwise does nothing.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ThrowIfInvalid() => AllocationLedger.ThrowIfInvalid(_handle, TypeName);

    /// <summary>The address, for callers that validated already.</summary>
    internal T* UnsafePointer => _pointer;

    /// <summary>Enumerates copies of the elements, checking validity at each step.</summary>
    public Enumerator GetEnumerator() => new(this);

    IEnumerator<T> IEnumerable<T>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>Whether both refer to the same memory (copies of one buffer). Contents are compared by <see cref="SequenceEqual"/>.</summary>
    public bool Equals(FixedBuffer<T> other) => _pointer == other._pointer && _length == other._length && _handle == other._handle;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is FixedBuffer<T> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nint)_pointer, _length, _handle);

    /// <inheritdoc/>
    public override string ToString() => $"FixedBuffer<{typeof(T).Name}>[{_length}]{(IsValid ? "" : " (freed)")}";

    /// <summary>Whether both refer to the same memory.</summary>
    public static bool operator ==(FixedBuffer<T> left, FixedBuffer<T> right) => left.Equals(right);

    /// <summary>Whether they refer to different memory.</summary>
    public static bool operator !=(FixedBuffer<T> left, FixedBuffer<T> right) => !left.Equals(right);

    private static void ThrowIfNotPrimitive()
    {
        if (!typeof(T).IsPrimitive)
        {
            ThrowHelper.ThrowNotSupported(
                $"FixedBuffer<T> holds primitive types only (bool, byte, sbyte, short, ushort, int, uint, long, ulong, nint, nuint, char, double, float); {typeof(T)} is not one. Use SafeArray<T> for structs.");
        }
    }

    /// <summary>Enumerates a <see cref="FixedBuffer{T}"/>, checking at each step that it was not freed.</summary>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly FixedBuffer<T> _buffer;
        private int _index;

        internal Enumerator(FixedBuffer<T> buffer)
        {
            _buffer = buffer;
            _index = -1;
        }

        /// <summary>A copy of the current element.</summary>
        /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
        public readonly T Current => _buffer[_index];

        readonly object IEnumerator.Current => Current;

        /// <summary>Moves to the next element.</summary>
        /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
        public bool MoveNext()
        {
            if (_buffer._length > 0)
            {
                _buffer.ThrowIfInvalid();
            }

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
