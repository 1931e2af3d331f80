using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// The checked <see cref="Memory{T}"/> of part of a <see cref="NativeBufferWriter{T}"/>'s block (its
/// free space for <c>GetMemory</c>, its written elements for <c>WrittenSequence</c>): every
/// <see cref="GetSpan"/> and <see cref="Pin"/> checks that the writer is alive and its block has not
/// moved since, and a pin keeps the writer from growing, being disposed or its arena reset until it is unpinned.
/// </summary>
internal sealed unsafe class WriterMemory<T> : MemoryManager<T>
    where T : unmanaged
{
    private readonly NativeBufferWriter<T> _writer;
    private readonly long _version;
    private readonly long _offset;
    private readonly int _length;
    private int _pins;

    internal WriterMemory(NativeBufferWriter<T> writer, long version, long offset, int length)
    {
        _writer = writer;
        _version = version;
        _offset = offset;
        _length = length;
    }

    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The writer's block grew since.</exception>
    public override Span<T> GetSpan() => new(_writer.PointerFor(_version, _offset), _length);

    /// <exception cref="ArgumentOutOfRangeException"><paramref name="elementIndex"/> is outside the memory.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The writer's block grew since.</exception>
    public override MemoryHandle Pin(int elementIndex = 0)
    {
        if ((uint)elementIndex > (uint)_length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, $"The pin must be inside the {_length:N0}-element memory.");
        }

        T* pointer = _writer.Pin(_version, _offset);
        Interlocked.Increment(ref _pins);
        return new MemoryHandle(pointer + elementIndex, default, new PinToken(this));
    }

    /// <exception cref="InvalidOperationException">There is no pin to end.</exception>
    public override void Unpin()
    {
        if (Interlocked.Decrement(ref _pins) < 0)
        {
            Interlocked.Increment(ref _pins);
            ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter memory was unpinned more times than it was pinned.");
        }

        _writer.Unpin();
    }

    /// <summary>Nothing to free: the writer owns the block.</summary>
    protected override void Dispose(bool disposing)
    {
    }
}
