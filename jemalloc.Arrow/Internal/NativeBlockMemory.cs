using System.Buffers;

namespace jemalloc.Arrow.Internal;

/// <summary>
/// A byte range of a native structure as <see cref="Memory{T}"/>, for Arrow buffers: no copy. It holds
/// the structure (<see cref="NativeBuffer{T}.Acquire"/>) until disposed, so the block cannot be freed
/// or its arena reset meanwhile, and each <see cref="Pin"/> (the C Data Interface export pins the
/// buffers it hands out) holds it once more until its handle is disposed, so a C consumer keeps the
/// block alive after the managed side let go. Once disposed, <see cref="GetSpan"/> throws instead of
/// handing out memory that may be freed. With <c>owns</c>, disposing frees the structure instead (the
/// allocator's blocks, which Arrow disposes when it is done with them).
/// </summary>
internal sealed unsafe class NativeBlockMemory<T> : MemoryManager<byte>
    where T : unmanaged, IEquatable<T>
{
    private readonly NativeBuffer<T> _buffer;
    private readonly byte* _pointer;
    private readonly int _length;
    private readonly bool _owns;
    private int _disposed;

    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    internal NativeBlockMemory(NativeBuffer<T> buffer, byte* pointer, int length, bool owns)
    {
        if (!owns)
        {
            buffer.Acquire();
        }

        _buffer = buffer;
        _pointer = pointer;
        _length = length;
        _owns = owns;
    }

    internal nint Address => (nint)_pointer;

    public override Span<byte> GetSpan()
    {
        ThrowIfDisposed();
        return new Span<byte>(_pointer, _length);
    }

    public override MemoryHandle Pin(int elementIndex = 0)
    {
        ThrowIfDisposed();
        ArgumentOutOfRangeException.ThrowIfNegative(elementIndex);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(elementIndex, _length);
        if (!_owns)
        {
            _buffer.Acquire();
        }

        return new MemoryHandle(_pointer + elementIndex, default, this);
    }

    public override void Unpin()
    {
        if (!_owns)
        {
            _buffer.Release();
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_owns)
        {
            _buffer.Dispose();
        }
        else
        {
            _buffer.Release();
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
}
