using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// Scoped access to a structure's memory: while the lease is open the structure cannot be freed,
/// disposed or reset, so its spans and references are safe to use. Take one with
/// <c>using var lease = array.Lease();</c>.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
/// <remarks>
/// <para>
/// A lease is a <see langword="ref struct"/> and its <see cref="Span"/>, <see cref="AsSpan"/>,
/// <see cref="GetChunks()"/> and element references are bound to the variable that holds it: the
/// compiler refuses to let them outlive that variable's scope (return them, store them in a field).
/// Within the scope, a span or reference taken before you call <see cref="Dispose"/> yourself is not
/// checked again and must not be used after it (with <see langword="using"/> that cannot happen);
/// the lease's own members, and a <see cref="ChunkEnumerator"/>'s next step, throw instead.
/// </para>
/// <para>
/// Each lease is counted on its own: <see cref="Dispose"/> closes it exactly once, even through a copy
/// of the lease, and can never close another holder's lease or an <c>Acquire()</c>.
/// <see langword="default"/> is an empty lease that holds nothing.
/// </para>
/// </remarks>
public ref struct MemoryLease<T>
    where T : unmanaged
{
    private const string TypeName = "MemoryLease";

    // The SafeHandle-based structure, kept reachable (so not finalized) while the lease is in use.
    private readonly object? _owner;
    private readonly unsafe T* _pointer;
    private readonly long _length;
    private readonly AllocationHandle _allocation;
    // The lease's own ledger token: spent by the first Dispose of any copy. Default for the library's
    // internal operations, which close their lease exactly once by construction.
    private readonly AllocationHandle _token;

    internal unsafe MemoryLease(object? owner, T* pointer, long length, AllocationHandle allocation, AllocationHandle token)
    {
        _owner = owner;
        _pointer = pointer;
        _length = length;
        _allocation = allocation;
        _token = token;
    }

    /// <summary>The number of elements.</summary>
    public readonly long Length => _length;

    /// <summary>Whether the lease is still open (not disposed through this or any copy). Always <see langword="false"/> for <see langword="default"/>.</summary>
    public readonly bool IsOpen => _token == default ? _allocation != default && _allocation.IsValid : _token.IsValid;

    /// <summary>The memory as a span.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    /// <exception cref="InvalidOperationException">The structure has more than <see cref="int.MaxValue"/> elements: use <see cref="AsSpan"/> or <see cref="GetChunks()"/>.</exception>
    [UnscopedRef]
    public readonly unsafe Span<T> Span
    {
        get
        {
            ThrowIfClosed();
            if (_length > int.MaxValue)
            {
                ThrowHelper.ThrowInvalidOperation($"The structure has {_length:N0} elements, more than one span can hold: use AsSpan(start, length) or GetChunks().");
            }

            return new Span<T>(_pointer, (int)_length);
        }
    }

    /// <summary>The raw address of the first element, for a native call made while the lease is open.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public readonly unsafe nint Pointer
    {
        get
        {
            ThrowIfClosed();
            return (nint)_pointer;
        }
    }

    /// <summary>A reference to the element at <paramref name="index"/>, valid while the lease is open.</summary>
    /// <exception cref="IndexOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [UnscopedRef]
    public readonly unsafe ref T this[long index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            if ((ulong)index >= (ulong)_length)
            {
                LedgerErrors.ThrowIndexFailure(index, _length, default, TypeName);
            }

            ThrowIfClosed();
            return ref _pointer[index];
        }
    }

    /// <summary>A part of the memory as a span.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the structure.</exception>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [UnscopedRef]
    public readonly unsafe Span<T> AsSpan(long start, int length)
    {
        ThrowIfClosed();
        RangeGuard.CheckRange(start, length, _length, nameof(start), nameof(length), "structure");
        return new Span<T>(_pointer + start, length);
    }

    /// <summary>The memory as consecutive spans of at most 1 GiB each, for <c>foreach (Span&lt;T&gt; chunk in lease.GetChunks())</c>.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [UnscopedRef]
    public readonly unsafe ChunkEnumerator GetChunks() => GetChunks(Math.Max(1, (1 << 30) / sizeof(T)));

    /// <summary>The memory as consecutive spans of at most <paramref name="maxChunkLength"/> elements.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxChunkLength"/> is zero or negative.</exception>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [UnscopedRef]
    public readonly unsafe ChunkEnumerator GetChunks(int maxChunkLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxChunkLength);
        ThrowIfClosed();
        return new ChunkEnumerator(_pointer, _length, maxChunkLength, _token);
    }

    /// <summary>Closes the lease; later calls, through this or any copy, do nothing.</summary>
    public readonly void Dispose()
    {
        if (_allocation == default || (_token != default && !AllocationLedger.SpendLeaseToken(_token)))
        {
            return;
        }

        AllocationLedger.ExitLease(_allocation);
        GC.KeepAlive(_owner);
    }

    /// <summary>Whether the lease's own members throw because it ended (never for <see langword="default"/> or a lease without a token).</summary>
    internal readonly bool HasEnded => _token != default && !_token.IsValid;

    private readonly void ThrowIfClosed()
    {
        if (HasEnded)
        {
            ThrowEnded();
        }
    }

    // The token is spent only by Dispose (the lease keeps the structure from being freed under it),
    // so an invalid token always means the lease ended. The name shows the element type, which is
    // built here, off the hot path.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowEnded() =>
        ThrowHelper.ThrowEnded(TypeName, $"{TypeName}<{typeof(T).Name}>", "take a new lease");

    /// <summary>Walks leased memory as consecutive spans; use with <see langword="foreach"/>.</summary>
    public unsafe ref struct ChunkEnumerator
    {
        private readonly T* _pointer;
        private readonly long _length;
        private readonly int _maxChunkLength;
        // The lease's token: a chunk is never made once the lease is disposed, even by an enumerator
        // taken before the Dispose.
        private readonly AllocationHandle _token;
        private long _next;
        private Span<T> _current;

        internal ChunkEnumerator(T* pointer, long length, int maxChunkLength, AllocationHandle token)
        {
            _pointer = pointer;
            _length = length;
            _maxChunkLength = maxChunkLength;
            _token = token;
        }

        /// <summary>The current chunk.</summary>
        public readonly Span<T> Current => _current;

        /// <summary>The index of the current chunk's first element.</summary>
        public readonly long CurrentOffset => _next - _current.Length;

        /// <summary>Returns this enumerator, for <see langword="foreach"/>.</summary>
        public readonly ChunkEnumerator GetEnumerator() => this;

        /// <summary>Moves to the next chunk.</summary>
        /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
        public bool MoveNext()
        {
            if (_token != default && !_token.IsValid)
            {
                ThrowLeaseEnded();
            }

            long remaining = _length - _next;
            if (remaining <= 0)
            {
                _current = default;
                return false;
            }

            int count = (int)Math.Min(remaining, _maxChunkLength);
            _current = new Span<T>(_pointer + _next, count);
            _next += count;
            return true;
        }

        [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowLeaseEnded() =>
            ThrowHelper.ThrowObjectDisposed(TypeName, $"The {TypeName}<{typeof(T).Name}> this chunk enumerator walks has ended (it was disposed); take a new lease to walk its chunks.");
    }
}
