using System.Buffers;
using jemalloc.Internal;

namespace jemalloc.Caching;

/// <summary>
/// The <see cref="IBufferWriter{T}"/> a <see cref="NativeCache.GetOrAdd{TState}"/> factory writes its value to:
/// arrays rented from the shared pool, returned on <see cref="Dispose"/>.
/// </summary>
internal sealed class CachePooledWriter : IBufferWriter<byte>, IDisposable
{
    private byte[] _buffer = [];
    private int _written;

    /// <summary>What was written.</summary>
    internal ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _written);

    /// <inheritdoc/>
    public void Advance(int count)
    {
        if (count < 0 || count > _buffer.Length - _written)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(count), count, $"Only {_buffer.Length - _written:N0} bytes were given by the last GetSpan or GetMemory.");
        }

        _written += count;
    }

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }

        _written = 0;
    }

    private void Ensure(int sizeHint)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeHint);
        int needed = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= needed)
        {
            return;
        }

        long size = Math.Max((long)_written + needed, Math.Max(256L, _buffer.Length * 2L));
        if (size > Array.MaxLength)
        {
            size = (long)_written + needed;
            if (size > Array.MaxLength)
            {
                ThrowHelper.ThrowOutOfMemory($"A cache value cannot grow past {Array.MaxLength:N0} bytes.");
            }
        }

        byte[] next = ArrayPool<byte>.Shared.Rent((int)size);
        _buffer.AsSpan(0, _written).CopyTo(next);
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }

        _buffer = next;
    }
}
