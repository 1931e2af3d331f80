using System.Collections;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// A fixed-length array of a primitive type in native memory allocated by jemalloc. It is an
/// 8-byte unmanaged struct (its <see cref="AllocationHandle"/>; the address and length live in the
/// ledger), so it can be a field of a user struct stored in a <see cref="SafeArray{T}"/>, and a copy
/// of it is always whole, even one made while another thread overwrites the variable.
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
/// Spans and element references are handed out only by a <see cref="Lease"/>, which keeps the
/// buffer from being freed while they are in use. <see langword="default"/> is an empty buffer that
/// owns no memory. See docs/threading.md for what holds when threads share a buffer.
/// </para>
/// </remarks>
public readonly unsafe struct FixedBuffer<T> : IEquatable<FixedBuffer<T>>, IEnumerable<T>
    where T : unmanaged
{
    private const string TypeName = "FixedBuffer";

    private readonly LedgerBlock _block;

    /// <summary>Allocates a zero-filled buffer of <paramref name="length"/> elements with the default options.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public FixedBuffer(int length)
        : this(length, AllocationOptions.Default)
    {
    }

    /// <summary>Allocates a zero-filled buffer of <paramref name="length"/> elements with the given options.</summary>
    /// <param name="length">The number of elements; greater than zero.</param>
    /// <param name="options">Arena, alignment and huge-page choices.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The buffer would exceed its arena's budget.</exception>
    public FixedBuffer(int length, AllocationOptions options)
        : this(length, options, AllocationKind.FixedBuffer)
    {
    }

    /// <summary>
    /// Allocates a buffer of <paramref name="length"/> elements, each set to <paramref name="value"/>,
    /// with the default options: written once, not cleared first.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public FixedBuffer(int length, T value)
        : this(length, value, AllocationOptions.Default)
    {
    }

    /// <summary>Allocates a buffer of <paramref name="length"/> elements, each set to <paramref name="value"/>, with the given options (written once, not cleared first).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    /// <exception cref="ArenaBudgetExceededException">The buffer would exceed its arena's budget.</exception>
    public FixedBuffer(int length, T value, AllocationOptions options)
        : this(length, options, AllocationKind.FixedBuffer, zero: false)
    {
        // Not yet published, and filled under a lease so an arena reset cannot free it meanwhile;
        // if a reset already invalidated it, it stays invalid and nothing can read it.
        if (!_block.IsLive)
        {
            return;
        }

        try
        {
            using MemoryLease<T> lease = BeginOperation();
            Simd.SimdKernels.Fill(lease.Span, value, Simd.SimdKernels.FillPlanFor<T>(lease.Length));
        }
        catch (ObjectDisposedException) when (!_block.IsLive)
        {
        }
    }

    /// <summary>Allocates a buffer holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public FixedBuffer(T[] values)
        : this(new ReadOnlySpan<T>(values ?? throw new ArgumentNullException(nameof(values))))
    {
    }

    /// <summary>Allocates a buffer holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public FixedBuffer(ReadOnlySpan<T> values)
        : this(values.Length, AllocationOptions.Default, AllocationKind.FixedBuffer, zero: false)
    {
        // Not cleared first: the copy writes every element before the buffer is published.
        Simd.SimdKernels.Copy(values, new Span<T>(UnsafePointer, values.Length));
    }

    internal FixedBuffer(int length, AllocationOptions options, AllocationKind kind, bool zero = true)
    {
        ThrowIfNotPrimitive();
        if (length <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, "A FixedBuffer must have at least one element.");
        }

        _ = LedgerBlock.Allocate(AllocationSize.Of<T>(length), options, kind, ElementTypes.IdOf<T>(), out _block, keyLength: (uint)length, zero: zero);
    }

    /// <summary>The number of elements; 0 for <see langword="default"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed (its slot may already describe other memory).</exception>
    public int Length => LengthOf(TypeName);

    /// <summary>Whether the memory is still allocated (no copy has freed it). <see langword="false"/> for <see langword="default"/>.</summary>
    public bool IsValid => _block.IsLive;

    /// <summary>The ledger handle shared by every copy of this buffer.</summary>
    public AllocationHandle Handle => _block.Handle;

    /// <summary>How many <see cref="Acquire"/> calls are not yet released, or -1 once freed.</summary>
    public int AcquireCount => _block.Handle.AcquireCount;

    /// <summary>The element at <paramref name="index"/>, read or written in place.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The buffer was freed through this or another copy.</exception>
    public T this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => *ElementAt(index);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        set => *ElementAt(index) = value;
    }

    /// <summary>The raw address of the first element, for native calls. Hold a <see cref="Lease"/> (or <see cref="Acquire"/>) for the duration of the call.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public nint Pointer
    {
        get
        {
            ThrowIfInvalid();
            return (nint)UnsafePointer;
        }
    }

    /// <summary>
    /// Opens a lease: until it is disposed, the buffer cannot be freed, and the lease hands out its
    /// span, element references and pointer. Use it as <c>using var lease = buffer.Lease();</c>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public MemoryLease<T> Lease() => BeginLease(withToken: true, TypeName);

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public void Fill(T value)
    {
        using MemoryLease<T> lease = BeginOperation();
        Simd.SimdKernels.Fill(lease.Span, value, Simd.SimdKernels.FillPlanFor<T>(lease.Length));
    }

    /// <summary>Copies every element to <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the buffer.</exception>
    public void CopyTo(Span<T> destination)
    {
        using MemoryLease<T> lease = BeginOperation();
        RangeGuard.CheckDestination(destination.Length, lease.Length, "buffer");
        Simd.SimdKernels.Copy(lease.Span, destination[..lease.Span.Length]);
    }

    /// <summary>Copies <paramref name="source"/> into the buffer, starting at element <paramref name="destinationIndex"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The source does not fit in the buffer at that index.</exception>
    public void CopyFrom(ReadOnlySpan<T> source, int destinationIndex = 0)
    {
        using MemoryLease<T> lease = BeginOperation();
        Simd.SimdKernels.Copy(source, lease.AsSpan(destinationIndex, source.Length));
    }

    /// <summary>Copies the elements into a new managed array.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public T[] ToArray()
    {
        using MemoryLease<T> lease = BeginOperation();
        return Simd.SimdKernels.ToArray<T>(lease.Span);
    }

    /// <summary>Whether the buffer holds exactly the elements of <paramref name="other"/>, compared bit for bit (so a NaN equals the same NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public bool SequenceEqual(ReadOnlySpan<T> other)
    {
        using MemoryLease<T> lease = BeginOperation();
        return System.Runtime.InteropServices.MemoryMarshal.AsBytes((ReadOnlySpan<T>)lease.Span)
            .SequenceEqual(System.Runtime.InteropServices.MemoryMarshal.AsBytes(other));
    }

    /// <summary>
    /// Adds one to the buffer's acquire count: until the matching <see cref="Release"/>, freeing it
    /// through any copy throws. Prefer <see cref="Lease"/>, which is counted per holder and released
    /// by <see langword="using"/>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="InvalidOperationException">It is already acquired 32,767 times.</exception>
    public void Acquire() => _block.Acquire(TypeName);

    /// <summary>Takes one from the buffer's acquire count (never closes a lease).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    public void Release() => _block.Release(TypeName);

    /// <summary>Frees the memory; every copy of the buffer becomes invalid.</summary>
    /// <exception cref="ObjectDisposedException">It was already freed (through any copy), or is <see langword="default"/>.</exception>
    /// <exception cref="InvalidOperationException">It is acquired or leased.</exception>
    public void Free() => _block.Free(TypeName);

    /// <summary>Throws if the buffer was freed; otherwise does nothing.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public void ThrowIfInvalid() => _block.ThrowIfNotLive(TypeName);

    /// <summary>The address, for callers that hold a lease or checked already.</summary>
    internal T* UnsafePointer => (T*)_block.Address;

    /// <summary>The ledger block shared by every copy.</summary>
    internal LedgerBlock Block => _block;

    /// <summary>A lease for one of the library's own operations: no token, closed exactly once by the caller's <see langword="using"/>.</summary>
    internal MemoryLease<T> BeginOperation() => BeginLease(withToken: false, TypeName);

    /// <summary>
    /// <see cref="BeginOperation()"/> for a structure built on this buffer: its exceptions name
    /// <paramref name="ownerName"/> (a freed <see cref="FixedUtf8String"/> says so, not "FixedBuffer").
    /// </summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    internal MemoryLease<T> BeginOperation(string ownerName) => BeginLease(withToken: false, ownerName);

    /// <summary><see cref="Lease()"/> for a structure built on this buffer, whose exceptions name <paramref name="ownerName"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    internal MemoryLease<T> LeaseFor(string ownerName) => BeginLease(withToken: true, ownerName);

    /// <summary>The number of elements, 0 for <see langword="default"/>; a freed buffer's exception names <paramref name="ownerName"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed (its slot may already describe other memory).</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int LengthOf(string ownerName)
    {
        // The default handle (slot 0, generation 0) never matches its slot's key, so the check
        // alone sends it to the cold path, which tells it from a freed buffer: a loop that reads
        // Length in its condition pays one load, add and compare.
        long length = _block.KeyedLength;
        if (length < 0)
        {
            return LengthOfDefaultOrThrow(_block, ownerName);
        }

        return (int)length;
    }

    /// <summary>Enumerates copies of the elements, checking validity at each step.</summary>
    public Enumerator GetEnumerator() => new(this);

    IEnumerator<T> IEnumerable<T>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>Whether both are copies of one buffer. Contents are compared by <see cref="SequenceEqual"/>.</summary>
    public bool Equals(FixedBuffer<T> other) => _block == other._block;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is FixedBuffer<T> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _block.GetHashCode();

    /// <inheritdoc/>
    public override string ToString() => _block.IsDefault ? $"FixedBuffer<{typeof(T).Name}>[0]"
        : IsValid ? $"FixedBuffer<{typeof(T).Name}>[{Length}]" : $"FixedBuffer<{typeof(T).Name}> (freed)";

    /// <summary>Whether both are copies of one buffer.</summary>
    public static bool operator ==(FixedBuffer<T> left, FixedBuffer<T> right) => left.Equals(right);

    /// <summary>Whether they are different buffers.</summary>
    public static bool operator !=(FixedBuffer<T> left, FixedBuffer<T> right) => !left.Equals(right);

    // The cold path of Length: 0 for default, otherwise the buffer was freed.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int LengthOfDefaultOrThrow(LedgerBlock block, string ownerName)
    {
        if (block.IsDefault)
        {
            return 0;
        }

        throw ThrowHelper.Freed(ownerName);
    }

    // The hot path: one load of the slot's key (generation and length) and one of its pointer.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private T* ElementAt(int index)
    {
        if (!_block.ContainsKeyed((uint)index, out nint address))
        {
            ThrowIndexFailure(index, _block);
        }

        return (T*)address + (uint)index;
    }

    [DoesNotReturn]
    private static void ThrowIndexFailure(int index, LedgerBlock block) =>
        block.ThrowIndexFailure(index, block.KeyedLengthOrZero, TypeName);

    private MemoryLease<T> BeginLease(bool withToken, string ownerName) => _block.OpenKeyedLease<T>(ownerName, withToken);

    private static void ThrowIfNotPrimitive()
    {
        if (!typeof(T).IsPrimitive)
        {
            ThrowHelper.ThrowNotSupported(
                $"FixedBuffer<T> holds primitive types only (bool, byte, sbyte, short, ushort, int, uint, long, ulong, nint, nuint, char, double, float); {typeof(T)} is not one. Use SafeArray<T> for structs.");
        }
    }

    /// <summary>
    /// Enumerates a <see cref="FixedBuffer{T}"/>. Each step reads its element under a lease, so a
    /// <c>Free</c> on another thread is refused while the read runs, and a step after it throws:
    /// enumeration never reads freed memory. For speed, loop over a lease's span.
    /// </summary>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly FixedBuffer<T> _buffer;
        private int _index;
        private T _current;

        internal Enumerator(FixedBuffer<T> buffer)
        {
            _buffer = buffer;
            _index = -1;
            _current = default;
        }

        /// <summary>A copy of the current element, read by the last <see cref="MoveNext"/>.</summary>
        public readonly T Current => _current;

        readonly object IEnumerator.Current => Current;

        /// <summary>Moves to the next element and reads it. A <see langword="default"/> buffer has no elements.</summary>
        /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
        public bool MoveNext()
        {
            if (_buffer._block.IsDefault)
            {
                return false;
            }

            using MemoryLease<T> lease = _buffer.BeginOperation();
            if (_index + 1 >= lease.Length)
            {
                _index = (int)lease.Length;
                return false;
            }

            _current = lease[++_index];
            return true;
        }

        /// <summary>Goes back to before the first element.</summary>
        public void Reset()
        {
            _index = -1;
            _current = default;
        }

        /// <summary>Does nothing: the enumerator holds no lease between steps.</summary>
        public readonly void Dispose()
        {
        }
    }
}
