using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// Exposes a <see cref="SafeBuffer{T}"/> as <see cref="Memory{T}"/>. It owns nothing: the buffer
/// keeps its own lifetime. Getting the span checks the buffer; pinning acquires it, so the buffer
/// cannot be disposed while a <see cref="MemoryHandle"/> from <see cref="Pin"/> is alive.
/// </summary>
internal sealed unsafe class SafeBufferMemoryManager<T> : MemoryManager<T>
    where T : unmanaged, IEquatable<T>
{
    private readonly SafeBuffer<T> _buffer;

    internal SafeBufferMemoryManager(SafeBuffer<T> buffer) => _buffer = buffer;

    /// <inheritdoc/>
    public override Span<T> GetSpan() => _buffer.Span;

    /// <inheritdoc/>
    public override MemoryHandle Pin(int elementIndex = 0)
    {
        if ((uint)elementIndex > (uint)_buffer.Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, $"The index is outside the buffer of length {_buffer.Length}.");
        }

        _buffer.Acquire();
        return new MemoryHandle(_buffer.UnsafePointer + elementIndex, default, this);
    }

    /// <inheritdoc/>
    public override void Unpin() => _buffer.Release();

    /// <summary>Does nothing: the memory belongs to the buffer.</summary>
    protected override void Dispose(bool disposing)
    {
    }
}
