using System.Buffers;
using jemalloc.Internal;

namespace jemalloc.IO;

/// <summary>
/// The checked <see cref="Memory{T}"/> of part of a <see cref="NativeBufferWriter{T}"/>'s block (its
/// free space for <c>GetMemory</c>, its written elements for <c>WrittenSequence</c>): every
/// <see cref="GetSpan"/> and <see cref="Pin"/> checks that the writer is alive and its block has not
/// moved since, and a pin keeps the writer from growing, being disposed or its arena reset until it is unpinned.
/// </summary>
internal sealed unsafe class WriterMemory<T> : MemoryManager<T>, IPinOwner
    where T : unmanaged
{
    private readonly NativeBufferWriter<T> _writer;
    private readonly long _version;
    private readonly long _offset;
    private readonly int _length;

    internal WriterMemory(NativeBufferWriter<T> writer, long version, long offset, int length)
    {
        _writer = writer;
        _version = version;
        _offset = offset;
        _length = length;
    }

    /// <summary>
    /// This memory as a <see cref="Memory{T}"/>, made without taking its span (as
    /// <see cref="MemoryManager{T}.Memory"/> does): the writer makes it while it is inside a write,
    /// where a span's check would find the write in progress.
    /// </summary>
    internal Memory<T> AsMemory() => CreateMemory(_length);

    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The writer's block grew since, or another thread is writing.</exception>
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
        return new MemoryHandle(pointer + elementIndex, default, new PinToken(this));
    }

    /// <summary>Refuses: a pin ends when the <see cref="MemoryHandle"/> that <see cref="Pin"/> returned is disposed.</summary>
    /// <exception cref="InvalidOperationException">Always: this method cannot tell whose pin it would end.</exception>
    public override void Unpin() => ThrowHelper.ThrowInvalidOperation(
        "A pin of a NativeBufferWriter's memory ends when the MemoryHandle that Pin returned is disposed; MemoryManager<T>.Unpin() cannot tell whose pin it would end, so it ends none.");

    /// <summary>Ends one pin of the writer (its token calls this once).</summary>
    void IPinOwner.EndPin() => _writer.Unpin();

    /// <summary>Nothing to free: the writer owns the block.</summary>
    protected override void Dispose(bool disposing)
    {
    }
}
