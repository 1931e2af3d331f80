using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A block rented from a <see cref="JemMemoryPool"/>: its owner and its <see cref="MemoryManager{T}"/>
/// over a <see cref="SafeArray{T}"/> of bytes, which holds the memory's one lifecycle.
/// </summary>
/// <remarks>
/// <see cref="GetSpan"/> checks on every call, so a <see cref="Memory{T}"/> kept past the owner's
/// <see cref="IDisposable.Dispose"/> throws instead of reaching freed memory. A pin acquires the array
/// in the ledger (an arena reset is refused while it is pinned) and counts here; a dispose while pinned
/// returns the block to the pool at once and leaves the free of the array to the last unpin.
/// </remarks>
internal sealed unsafe class PooledBlock : MemoryManager<byte>
{
    private readonly JemMemoryPool _pool;
    private readonly SafeArray<byte> _array;
    private readonly int _length;
    private readonly Lock _gate = new();
    private int _pins;
    private bool _disposed;

    internal PooledBlock(JemMemoryPool pool, SafeArray<byte> array)
    {
        _pool = pool;
        _array = array;
        _length = array.Length;
    }

    /// <summary>
    /// An owner dropped without <see cref="IDisposable.Dispose"/> gives its bytes back to the pool's
    /// budget and books, as a dispose would; otherwise a budgeted pool would refuse rents for good. The
    /// array's own finalizer frees the memory.
    /// </summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Reliability", "CA2015", Justification = "It frees no memory: it only returns the bytes to the pool's books; the array's own finalizer decides about the memory.")]
    ~PooledBlock()
    {
        if (!_disposed)
        {
            _pool.OnReturned(_length);
        }
    }

    /// <summary>The block's memory.</summary>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    public override Memory<byte> Memory
    {
        get
        {
            ThrowIfUnusable();
            return CreateMemory(_length);
        }
    }

    /// <summary>Whether the block's memory is still allocated (it may be, after dispose, until the last unpin).</summary>
    internal bool IsMemoryAllocated => _array.IsValid;

    /// <summary>The block's span, checked now: valid until the owner is disposed.</summary>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    public override Span<byte> GetSpan()
    {
        ThrowIfUnusable();
        return new Span<byte>(_array.UnsafePointer, _length);
    }

    /// <summary>Pins the block (it is native: it never moves) until <see cref="Unpin"/>; the memory stays allocated until then.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="elementIndex"/> is negative or past the block.</exception>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    public override MemoryHandle Pin(int elementIndex = 0)
    {
        if ((uint)elementIndex > (uint)_length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, $"The pin must be inside the {_length:N0}-byte block.");
        }

        lock (_gate)
        {
            ThrowIfUnusable();
            _array.Acquire();
            _pins++;
        }

        return new MemoryHandle(_array.UnsafePointer + elementIndex, default, new PinToken(this));
    }

    /// <summary>Ends one <see cref="Pin"/>; the last one frees the memory of a disposed owner.</summary>
    /// <exception cref="InvalidOperationException">There is no pin to end.</exception>
    public override void Unpin()
    {
        bool free;
        lock (_gate)
        {
            if (_pins == 0)
            {
                ThrowHelper.ThrowInvalidOperation("This JemMemoryPool block was unpinned more times than it was pinned.");
            }

            _pins--;
            _array.Release();
            free = _disposed && _pins == 0;
        }

        if (free)
        {
            _array.Dispose();
        }
    }

    /// <summary>Returns the block to its pool; frees it now, or at the last unpin if pinned. Again: does nothing.</summary>
    protected override void Dispose(bool disposing)
    {
        bool free;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            free = _pins == 0;
        }

        _pool.OnReturned(_length);
        if (free)
        {
            _array.Dispose();
        }
    }

    private void ThrowIfUnusable()
    {
        if (Volatile.Read(ref _disposed))
        {
            ThrowHelper.ThrowObjectDisposed("JemMemoryPool block");
        }

        _array.ThrowIfInvalid();
    }
}
