using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// Exposes a <see cref="SafeBuffer{T}"/> as <see cref="Memory{T}"/>. It owns nothing: the buffer keeps
/// its own lifetime. Getting the span checks the buffer; each pin opens a lease, so the buffer cannot
/// be disposed while a <see cref="MemoryHandle"/> from <see cref="Pin"/> is alive.
/// </summary>
internal sealed unsafe class SafeBufferMemoryManager<T> : MemoryManager<T>
    where T : unmanaged, IEquatable<T>
{
    private readonly SafeBuffer<T> _buffer;
    private int _pins;

    internal SafeBufferMemoryManager(SafeBuffer<T> buffer) => _buffer = buffer;

    /// <inheritdoc/>
    public override Span<T> GetSpan()
    {
        _buffer.ThrowIfInvalid();
        return new Span<T>(_buffer.UnsafePointer, _buffer.Length);
    }

    /// <inheritdoc/>
    public override MemoryHandle Pin(int elementIndex = 0)
    {
        if ((uint)elementIndex > (uint)_buffer.Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, $"The index is outside the buffer of length {_buffer.Length}.");
        }

        AllocationLedger.EnterLease(_buffer.Handle, _buffer.GetType().Name);
        Interlocked.Increment(ref _pins);
        return new MemoryHandle(_buffer.UnsafePointer + elementIndex, default, this);
    }

    /// <inheritdoc/>
    public override void Unpin()
    {
        // MemoryHandle is a struct: copies of one pin may each unpin. Never close more leases than were pinned.
        int pins;
        do
        {
            pins = Volatile.Read(ref _pins);
            if (pins == 0)
            {
                return;
            }
        }
        while (Interlocked.CompareExchange(ref _pins, pins - 1, pins) != pins);

        AllocationLedger.ExitLease(_buffer.Handle);
    }

    /// <summary>Does nothing: the memory belongs to the buffer.</summary>
    protected override void Dispose(bool disposing)
    {
    }
}
