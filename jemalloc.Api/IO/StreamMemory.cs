using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;

namespace jemalloc.IO;

/// <summary>
/// The memory under a <see cref="NativeMemoryStream"/> and the stream's reads and writes of it at a
/// position: the fixed bytes of an array (a <see cref="SafeArray{T}"/> or <see cref="HugeArray{T}"/>),
/// or the written bytes of a <see cref="NativeBufferWriter{T}"/>, whose block grows. Each access runs
/// under a lease of the array or writer, so its owner's dispose on another thread is refused while it
/// runs. The stream keeps the position, the one-thread rule and the <see cref="Stream"/> contract.
/// A mutable struct: keep it in a non-readonly field and call it through that field.
/// </summary>
internal struct StreamMemory
{
    // One chunk of a gap cleared by a write or SetLength: a span holds at most int.MaxValue bytes.
    private const int ClearChunk = 1 << 30;

    private readonly NativeBuffer<byte>? _array;
    private readonly NativeBufferWriter<byte>? _writer;
    private readonly long _capacity;

    // The length of the contents over an array; over a writer it is the writer's written count.
    private long _length;

    /// <summary>The written bytes of <paramref name="writer"/>, which grows as needed.</summary>
    internal StreamMemory(NativeBufferWriter<byte> writer)
    {
        _writer = writer;
        _capacity = long.MaxValue;
    }

    /// <summary>The bytes of <paramref name="array"/>: its length is the contents' length and capacity.</summary>
    internal StreamMemory(NativeBuffer<byte> array)
    {
        _array = array;
        _capacity = array.ElementCount;
        _length = _capacity;
    }

    /// <summary>Whether writes past the capacity grow the memory (a writer) rather than throw (an array).</summary>
    internal readonly bool CanGrow => _writer is not null;

    /// <summary>Whether the array or writer is still usable (not disposed, nor freed by an arena reset).</summary>
    internal readonly bool IsUsable => _writer is null ? _array!.IsValid : !_writer.IsDisposed;

    /// <summary>The length of the contents, in bytes.</summary>
    internal readonly long Length => _writer is null ? _length : _writer.WrittenCount;

    /// <summary>The bytes the memory holds now: the array's length, or the writer's current capacity.</summary>
    internal readonly long Capacity => _writer is null ? _capacity : _writer.Capacity;

    /// <summary>Throws <see cref="ObjectDisposedException"/> if the array or writer was disposed.</summary>
    internal readonly void ThrowIfDisposed()
    {
        if (_writer is null)
        {
            _array!.ThrowIfInvalid();
        }
        else
        {
            _writer.ThrowIfDisposed();
        }
    }

    /// <summary>A lease on the whole memory for one operation, ended by the caller's <see langword="using"/>.</summary>
    internal readonly MemoryLease<byte> BeginOperation() => _writer is null ? _array!.BeginOperation() : _writer.BeginOperation();

    /// <summary>Reads up to <paramref name="buffer"/>'s length of bytes from <paramref name="position"/>; 0 at or past the end.</summary>
    internal readonly int Read(long position, Span<byte> buffer)
    {
        using MemoryLease<byte> lease = BeginOperation();
        long available = Length - position;
        if (available <= 0 || buffer.IsEmpty)
        {
            return 0;
        }

        int count = (int)Math.Min(available, buffer.Length);
        lease.AsSpan(position, count).CopyTo(buffer);
        return count;
    }

    /// <summary>The byte at <paramref name="position"/>, or -1 at or past the end.</summary>
    internal readonly int ReadByte(long position)
    {
        using MemoryLease<byte> lease = BeginOperation();
        return position >= Length ? -1 : lease[position];
    }

    /// <summary>
    /// Writes <paramref name="buffer"/> at <paramref name="position"/> (at most
    /// <see cref="NativeMemoryStream.MaxLength"/>), zero-filling any gap from the end to the position
    /// and extending the length if it writes past it.
    /// </summary>
    /// <returns>The position after the write.</returns>
    internal long Write(long position, ReadOnlySpan<byte> buffer)
    {
        // The position is at most MaxLength (its setter and Seek see to it), so this cannot wrap.
        long end = position + buffer.Length;
        if (end > NativeMemoryStream.MaxLength)
        {
            throw new IOException($"The write would take the stream past {NativeMemoryStream.MaxLength:N0} bytes, the longest a NativeMemoryStream can be.");
        }

        if (buffer.IsEmpty && end <= Length)
        {
            // As MemoryStream: an empty write extends the length only from a position past the end.
            return end;
        }

        // Bytes of the block itself (its WrittenSpan, a memory of its WrittenSequence, a chunk of
        // CopyTo into this stream) are read from where the growth copied them; the growth keeps the
        // old block, which the caller (a CopyTo holding a lease on it) may still be reading.
        long offsetInBlock = !buffer.IsEmpty && _writer is not null && end > _writer.Capacity ? OffsetInBlock(buffer) : -1;
        Reserve(end, keepOld: offsetInBlock >= 0);
        using MemoryLease<byte> lease = BeginOperation();
        long length = Length;
        if (!buffer.IsEmpty)
        {
            ReadOnlySpan<byte> source = offsetInBlock < 0 ? buffer : lease.AsSpan(offsetInBlock, buffer.Length);
            source.CopyTo(lease.AsSpan(position, buffer.Length));
        }

        if (position > length)
        {
            // After the copy, which may read bytes of the block in this gap, as a grown MemoryStream
            // reads them from its old array.
            Clear(lease, length, position - length);
        }

        if (end > length)
        {
            SetCurrentLength(end);
        }

        return end;
    }

    /// <summary>Sets the length: a shorter one cuts the contents, a longer one adds zero bytes, growing a writer's block as needed.</summary>
    internal void SetLength(long value)
    {
        Reserve(value);
        using MemoryLease<byte> lease = BeginOperation();
        long length = Length;
        if (value > length)
        {
            Clear(lease, length, value - length);
        }

        SetCurrentLength(value);
    }

    /// <summary>Makes room for <paramref name="end"/> bytes: grows a writer (keeping its old block if <paramref name="keepOld"/>), refuses past an array's capacity.</summary>
    internal readonly void Reserve(long end, bool keepOld = false)
    {
        if (_writer is not null)
        {
            _writer.EnsureCapacityFor(end, keepOld);
        }
        else if (end > _capacity)
        {
            ThrowHelper.ThrowNotSupported($"This NativeMemoryStream is over an array of {_capacity:N0} bytes and cannot grow to {end:N0}.");
        }
    }

    /// <summary>Disposes the array or writer; if it is in use the dispose is refused, and it stays usable.</summary>
    internal readonly void Dispose()
    {
        if (_writer is not null)
        {
            _writer.Dispose();
        }
        else
        {
            _array!.Dispose();
        }
    }

    private static void Clear(in MemoryLease<byte> lease, long start, long count)
    {
        while (count > 0)
        {
            int chunk = (int)Math.Min(count, ClearChunk);
            lease.AsSpan(start, chunk).Clear();
            start += chunk;
            count -= chunk;
        }
    }

    /// <summary>Where <paramref name="buffer"/> lies in the writer's block: its offset if inside it, -1 if outside it.</summary>
    /// <exception cref="ArgumentException">The buffer lies partly inside the block (only unsafe code makes such a span).</exception>
    private readonly unsafe long OffsetInBlock(ReadOnlySpan<byte> buffer)
    {
        using MemoryLease<byte> lease = BeginOperation();
        if (lease.Length == 0)
        {
            // No block yet.
            return -1;
        }

        // Addresses compared only: a managed buffer never lies in native memory, wherever the GC moves it.
        nuint start = (nuint)Unsafe.AsPointer(ref MemoryMarshal.GetReference(buffer));
        nuint end = start + (nuint)buffer.Length;
        nuint block = (nuint)lease.Pointer;
        nuint blockEnd = block + (nuint)lease.Length;
        if (end <= block || start >= blockEnd)
        {
            return -1;
        }

        if (start < block || end > blockEnd)
        {
            throw new ArgumentException("The buffer lies partly inside this stream's own memory and partly outside it.", nameof(buffer));
        }

        return (long)(start - block);
    }

    private void SetCurrentLength(long length)
    {
        if (_writer is null)
        {
            _length = length;
        }
        else
        {
            _writer.SetWrittenCount(length);
        }
    }
}
