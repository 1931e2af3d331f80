using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A seekable <see cref="Stream"/> over native memory: over a <see cref="SafeArray{T}"/> or
/// <see cref="HugeArray{T}"/> of bytes (a fixed capacity, read-only or writable), or over the growing
/// block of a <see cref="NativeBufferWriter{T}"/> of bytes (grown with <c>rallocx</c>, in place when
/// it can). Lengths and positions are <see cref="long"/>: a stream can pass 2 GiB.
/// </summary>
/// <remarks>
/// <para>
/// It behaves as <see cref="MemoryStream"/> does at the edges: a read at or past the end returns 0, a
/// seek before the beginning throws <see cref="IOException"/>, a position past the end is allowed and a
/// write there fills the gap with zeros, a write past the capacity of an array throws
/// <see cref="NotSupportedException"/> while a growable stream grows. Every member gives the result
/// and throws the exception type <see cref="MemoryStream"/> gives for the same call, but for these
/// intended differences: lengths and positions are <see cref="long"/>s up to <see cref="MaxLength"/>
/// (<see cref="MemoryStream"/> stops at <see cref="int.MaxValue"/>), so a position or seek past
/// <see cref="int.MaxValue"/> is allowed, and a length past <see cref="int.MaxValue"/> is refused with
/// <see cref="NotSupportedException"/> only by a stream over an array (past its capacity) or a read-only one; after
/// <see cref="Stream.Dispose()"/>, <see cref="ToArray"/> and <see cref="SetLength"/> throw
/// <see cref="ObjectDisposedException"/> (the memory is gone, where a <see cref="MemoryStream"/> keeps its
/// array and says <see cref="NotSupportedException"/> for <c>SetLength</c>); there is no
/// <c>GetBuffer</c>, <c>TryGetBuffer</c> or <c>Capacity</c> setter (no managed array; a growable stream
/// grows its native block with <c>rallocx</c>, in place where it can, where <see cref="MemoryStream"/> copies into a new array).
/// </para>
/// <para>
/// Like <see cref="MemoryStream"/>, one thread at a time may use the stream, and this is checked: a
/// second thread that reads, writes, seeks, sets the position or length or copies while another
/// thread's operation runs gets <see cref="InvalidOperationException"/> (so does a use of the writer
/// under it, directly, on another thread meanwhile). <see cref="ToArray"/>, <see cref="Length"/> and
/// <see cref="Position"/>'s getter only read, and are not refused. Each operation holds a
/// lease on the memory while it runs, so its owner may dispose the array (or writer) on any thread:
/// a dispose that races a running operation is refused with <see cref="InvalidOperationException"/>, and
/// every operation after a dispose throws <see cref="ObjectDisposedException"/>. The stream never reads
/// or writes freed memory.
/// </para>
/// <para>
/// Disposing the stream disposes the array or writer under it unless it was created with
/// <c>leaveOpen: true</c>, as <see cref="StreamReader"/> does.
/// </para>
/// </remarks>
/// <example>
/// <code>
/// using var stream = new NativeMemoryStream();          // growable
/// await source.CopyToAsync(stream);
/// stream.Position = 0;
/// using var array = new HugeArray&lt;byte&gt;(3L &lt;&lt; 30);
/// using var view = new NativeMemoryStream(array, writable: false, leaveOpen: true);
/// </code>
/// </example>
public sealed class NativeMemoryStream : Stream, IWriterGuarded
{
    /// <summary>
    /// The longest a stream can be, and the furthest its position can go, in bytes: jemalloc's largest
    /// block on a 64-bit process (7 × 2^60 bytes). Past it, <see cref="SetLength"/>, the
    /// <see cref="Position"/> setter and <see cref="Seek"/> throw <see cref="ArgumentOutOfRangeException"/>
    /// and a write throws <see cref="IOException"/>, as <see cref="MemoryStream"/> does past its own limit
    /// (<see cref="int.MaxValue"/>); below it, a length the memory cannot hold is an <see cref="OutOfMemoryException"/>.
    /// </summary>
    public const long MaxLength = 7L << 60;

    // One chunk of a gap cleared by a write or SetLength: a span holds at most int.MaxValue bytes.
    private const int ClearChunk = 1 << 30;

    private readonly NativeBuffer<byte>? _array;
    private readonly NativeBufferWriter<byte>? _writer;
    private readonly long _capacity;
    private readonly bool _writable;
    private readonly bool _leaveOpen;
    private long _length;
    private long _position;
    private bool _disposed;

    // The one-thread rule: every operation that moves the position or changes the contents enters it.
    private SingleWriterGuard _guard;

    /// <summary>Creates an empty growable stream over a new <see cref="NativeBufferWriter{T}"/> of its own; nothing is allocated until the first write.</summary>
    public NativeMemoryStream()
        : this(new NativeBufferWriter<byte>(), leaveOpen: false)
    {
    }

    /// <summary>Creates an empty growable stream with room for <paramref name="initialCapacity"/> bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCapacity"/> is zero or negative.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public NativeMemoryStream(long initialCapacity)
        : this(new NativeBufferWriter<byte>(initialCapacity), leaveOpen: false)
    {
    }

    /// <summary>
    /// Creates a growable stream over <paramref name="buffer"/>: its written bytes are the stream's
    /// contents (the position starts at 0), and writes and <see cref="SetLength"/> change them, growing
    /// its block as needed.
    /// </summary>
    /// <param name="buffer">The writer whose block the stream reads and writes.</param>
    /// <param name="leaveOpen">Whether the writer stays usable after the stream is disposed; otherwise the stream disposes it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="buffer"/> was disposed.</exception>
    public NativeMemoryStream(NativeBufferWriter<byte> buffer, bool leaveOpen = false)
    {
        ArgumentNullException.ThrowIfNull(buffer);
        _ = buffer.WrittenCount;
        _writer = buffer;
        _writable = true;
        _leaveOpen = leaveOpen;
        _capacity = long.MaxValue;
    }

    /// <summary>
    /// Creates a stream over the bytes of <paramref name="array"/> (a <see cref="SafeArray{T}"/> or
    /// <see cref="HugeArray{T}"/>): its length and capacity are the array's length, the position starts at 0.
    /// </summary>
    /// <param name="array">The array the stream reads and writes.</param>
    /// <param name="writable">Whether the stream may write; a read-only stream throws <see cref="NotSupportedException"/> on every write.</param>
    /// <param name="leaveOpen">Whether the array stays usable after the stream is disposed; otherwise the stream disposes it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="array"/> is null.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="array"/> was disposed.</exception>
    public NativeMemoryStream(NativeBuffer<byte> array, bool writable = true, bool leaveOpen = false)
    {
        ArgumentNullException.ThrowIfNull(array);
        array.ThrowIfInvalid();
        _array = array;
        _capacity = array.ElementCount;
        _length = _capacity;
        _writable = writable;
        _leaveOpen = leaveOpen;
    }

    /// <summary>Whether the stream can read: until it is disposed, or the memory under it is.</summary>
    public override bool CanRead => IsUsable;

    /// <summary>Whether the stream can seek: until it is disposed, or the memory under it is.</summary>
    public override bool CanSeek => IsUsable;

    /// <summary>Whether the stream can write: it was created writable, and neither it nor the memory under it is disposed.</summary>
    public override bool CanWrite => _writable && IsUsable;

    /// <summary>Whether writes past the capacity grow the memory (a stream over a writer) rather than throw (a stream over an array).</summary>
    public bool CanGrow => _writer is not null;

    /// <summary>The length of the contents, in bytes.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    public override long Length
    {
        get
        {
            ThrowIfDisposed();
            return CurrentLength;
        }
    }

    /// <summary>The bytes the memory holds now: the array's length, or the writer's current capacity.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    public long Capacity
    {
        get
        {
            ThrowIfDisposed();
            return _writer is null ? _capacity : _writer.Capacity;
        }
    }

    /// <summary>The position of the next read or write; it may be past the end.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative or past <see cref="MaxLength"/>.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    public override long Position
    {
        get
        {
            ThrowIfDisposed();
            return _position;
        }

        set
        {
            if ((ulong)value > MaxLength)
            {
                ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, $"The position must be 0 to {MaxLength:N0}, the longest a NativeMemoryStream can be.");
            }

            ThrowIfDisposed();
            Enter();
            _position = value;
            _guard.Exit();
        }
    }

    /// <summary>Whether the stream itself was disposed (what its guard asks; the memory under it is checked by each operation).</summary>
    bool IWriterGuarded.IsDisposed => _disposed;

    private bool IsUsable => !_disposed && (_writer is null ? _array!.IsValid : !_writer.IsDisposed);

    private long CurrentLength => _writer is null ? _length : _writer.WrittenCount;

    /// <summary>Reads up to <paramref name="buffer"/>'s length of bytes from the position; 0 at or past the end.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    public override int Read(Span<byte> buffer)
    {
        ThrowIfDisposed();
        Enter();
        try
        {
            return ReadCore(buffer);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private int ReadCore(Span<byte> buffer)
    {
        using MemoryLease<byte> lease = BeginOperation();
        long available = CurrentLength - _position;
        if (available <= 0 || buffer.IsEmpty)
        {
            return 0;
        }

        int count = (int)Math.Min(available, buffer.Length);
        lease.AsSpan(_position, count).CopyTo(buffer);
        _position += count;
        return count;
    }

    /// <summary>Reads up to <paramref name="count"/> bytes from the position into <paramref name="buffer"/> at <paramref name="offset"/>; 0 at or past the end.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative or past the buffer.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        return Read(buffer.AsSpan(offset, count));
    }

    /// <summary>Reads the byte at the position, or returns -1 at or past the end.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    public override int ReadByte()
    {
        ThrowIfDisposed();
        Enter();
        try
        {
            using MemoryLease<byte> lease = BeginOperation();
            if (_position >= CurrentLength)
            {
                return -1;
            }

            return lease[_position++];
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Writes <paramref name="buffer"/> at the position, zero-filling any gap from the end to the
    /// position and extending the length if it writes past it (an empty write past the end extends
    /// it to the position, as <see cref="MemoryStream"/>'s does, and over an array past its capacity
    /// throws <see cref="NotSupportedException"/>). Bytes of the stream's own block (its
    /// writer's <c>WrittenSpan</c>) are read from where a growth of the block puts them.
    /// </summary>
    /// <exception cref="NotSupportedException">The stream is read-only, or the write would pass the capacity of the array under it.</exception>
    /// <exception cref="IOException">The write would take the position past <see cref="MaxLength"/>.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream, or the writer under it must grow while a memory of it is pinned or used by another operation.</exception>
    /// <exception cref="OutOfMemoryException">The writer under the stream cannot grow.</exception>
    /// <exception cref="ArgumentException"><paramref name="buffer"/> lies partly inside the writer's block and partly outside it (a span only unsafe code makes).</exception>
    public override void Write(ReadOnlySpan<byte> buffer)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly();
        Enter();
        try
        {
            WriteCore(buffer);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private void WriteCore(ReadOnlySpan<byte> buffer)
    {
        // The position is at most MaxLength (its setter and Seek see to it), so this cannot wrap.
        long end = _position + buffer.Length;
        if (end > MaxLength)
        {
            throw new IOException($"The write would take the stream past {MaxLength:N0} bytes, the longest a NativeMemoryStream can be.");
        }

        if (buffer.IsEmpty && end <= CurrentLength)
        {
            // As MemoryStream: an empty write extends the length only from a position past the end.
            return;
        }

        // Bytes of the block itself (its WrittenSpan, a memory of its WrittenSequence, a chunk of
        // CopyTo into this stream) are read from where the growth copied them; the growth keeps the
        // old block, which the caller (a CopyTo holding a lease on it) may still be reading.
        long offsetInBlock = !buffer.IsEmpty && _writer is not null && end > _writer.Capacity ? OffsetInBlock(buffer) : -1;
        Reserve(end, keepOld: offsetInBlock >= 0);
        using MemoryLease<byte> lease = BeginOperation();
        long length = CurrentLength;
        if (!buffer.IsEmpty)
        {
            ReadOnlySpan<byte> source = offsetInBlock < 0 ? buffer : lease.AsSpan(offsetInBlock, buffer.Length);
            source.CopyTo(lease.AsSpan(_position, buffer.Length));
        }

        if (_position > length)
        {
            // After the copy, which may read bytes of the block in this gap, as a grown MemoryStream
            // reads them from its old array.
            Clear(lease, length, _position - length);
        }

        if (end > length)
        {
            SetCurrentLength(end);
        }

        _position = end;
    }

    /// <summary>Writes <paramref name="count"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> at the position.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative or past the buffer.</exception>
    /// <exception cref="NotSupportedException">The stream is read-only, or the write would pass the capacity of the array under it.</exception>
    /// <exception cref="IOException">The write would take the position past <see cref="MaxLength"/>.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream, or the writer under it must grow while a memory of it is pinned or used by another operation.</exception>
    /// <exception cref="OutOfMemoryException">The writer under the stream cannot grow.</exception>
    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        Write(new ReadOnlySpan<byte>(buffer, offset, count));
    }

    /// <summary>Writes one byte at the position.</summary>
    /// <exception cref="NotSupportedException">The stream is read-only, or the write would pass the capacity of the array under it.</exception>
    /// <exception cref="IOException">The write would take the position past <see cref="MaxLength"/>.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream, or the writer under it must grow while a memory of it is pinned or used by another operation.</exception>
    /// <exception cref="OutOfMemoryException">The writer under the stream cannot grow.</exception>
    public override void WriteByte(byte value) => Write(new ReadOnlySpan<byte>(in value));

    /// <summary>Moves the position to <paramref name="offset"/> from <paramref name="origin"/>; past the end is allowed.</summary>
    /// <returns>The new position.</returns>
    /// <exception cref="IOException">The new position would be before the beginning.</exception>
    /// <exception cref="ArgumentException"><paramref name="origin"/> is not a <see cref="SeekOrigin"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The new position would be past <see cref="MaxLength"/>.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    public override long Seek(long offset, SeekOrigin origin)
    {
        ThrowIfDisposed();
        Enter();
        try
        {
            return SeekCore(offset, origin);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private long SeekCore(long offset, SeekOrigin origin)
    {
        long from = origin switch
        {
            SeekOrigin.Begin => 0,
            SeekOrigin.Current => _position,
            SeekOrigin.End => CurrentLength,
            _ => throw new ArgumentException($"{origin} is not a SeekOrigin.", nameof(origin)),
        };
        long position;
        try
        {
            position = checked(from + offset);
        }
        catch (OverflowException)
        {
            throw new ArgumentOutOfRangeException(nameof(offset), offset, "The new position would be past the longest length a stream can have.");
        }

        if (position < 0)
        {
            throw new IOException("An attempt was made to move the position before the beginning of the stream.");
        }

        if (position > MaxLength)
        {
            throw new ArgumentOutOfRangeException(nameof(offset), offset, $"The new position would be past {MaxLength:N0} bytes, the longest a NativeMemoryStream can be.");
        }

        _position = position;
        return position;
    }

    /// <summary>
    /// Sets the length: a shorter one cuts the contents (and brings the position back to it if it was
    /// past), a longer one adds zero bytes, growing a writer's block as needed.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="value"/> is negative or past <see cref="MaxLength"/> (checked first, as <see cref="MemoryStream"/> does).</exception>
    /// <exception cref="NotSupportedException">The stream is read-only, or <paramref name="value"/> is past the capacity of the array under it.</exception>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream, or the writer under it must grow while a memory of it is pinned or used by another operation.</exception>
    /// <exception cref="OutOfMemoryException">The writer under the stream cannot grow.</exception>
    public override void SetLength(long value)
    {
        if ((ulong)value > MaxLength)
        {
            // Before any other check, as MemoryStream does for a length past its own limit.
            ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, $"The length must be 0 to {MaxLength:N0}, the longest a NativeMemoryStream can be.");
        }

        ThrowIfDisposed();
        ThrowIfReadOnly();
        Enter();
        try
        {
            SetLengthCore(value);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private void SetLengthCore(long value)
    {
        Reserve(value);
        using MemoryLease<byte> lease = BeginOperation();
        long length = CurrentLength;
        if (value > length)
        {
            Clear(lease, length, value - length);
        }

        SetCurrentLength(value);
        if (_position > value)
        {
            _position = value;
        }
    }

    /// <summary>Does nothing: the bytes are in memory already.</summary>
    public override void Flush()
    {
    }

    /// <summary>Completes at once (the bytes are in memory already), or is canceled if <paramref name="cancellationToken"/> is.</summary>
    public override Task FlushAsync(CancellationToken cancellationToken) =>
        cancellationToken.IsCancellationRequested ? Task.FromCanceled(cancellationToken) : Task.CompletedTask;

    /// <summary>Reads as <see cref="Read(Span{byte})"/>, completing synchronously; canceled if <paramref name="cancellationToken"/> is, faulted with what <see cref="Read(Span{byte})"/> throws.</summary>
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }

        try
        {
            return ValueTask.FromResult(Read(buffer.Span));
        }
        catch (Exception exception)
        {
            return ValueTask.FromException<int>(exception);
        }
    }

    /// <summary>Reads as <see cref="Read(byte[], int, int)"/>, completing synchronously; canceled if <paramref name="cancellationToken"/> is.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative or past the buffer.</exception>
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    /// <summary>Writes as <see cref="Write(ReadOnlySpan{byte})"/>, completing synchronously; canceled if <paramref name="cancellationToken"/> is, faulted with what <see cref="Write(ReadOnlySpan{byte})"/> throws.</summary>
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        try
        {
            Write(buffer.Span);
            return ValueTask.CompletedTask;
        }
        catch (Exception exception)
        {
            return ValueTask.FromException(exception);
        }
    }

    /// <summary>Writes as <see cref="Write(byte[], int, int)"/>, completing synchronously; canceled if <paramref name="cancellationToken"/> is.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative or past the buffer.</exception>
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    /// <summary>
    /// Writes the bytes from the position to the end into <paramref name="destination"/>, in chunks of
    /// at most <paramref name="bufferSize"/> bytes straight from native memory, each under a lease.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><paramref name="destination"/> cannot be written.</exception>
    /// <exception cref="ObjectDisposedException">The stream, the memory under it, or <paramref name="destination"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    public override void CopyTo(Stream destination, int bufferSize)
    {
        ValidateCopyToArguments(destination, bufferSize);
        if (ReferenceEquals(destination, this))
        {
            CopyToSelf(bufferSize);
            return;
        }

        while (true)
        {
            // Each chunk: the destination's write may dispose this stream (a leaveOpen one disposes
            // nothing under it, so only this check sees it).
            ThrowIfDisposed();
            Enter();
            MemoryLease<byte> lease = default;
            long start = 0;
            int count = 0;
            try
            {
                lease = BeginOperation();
                start = _position;
                long remaining = CurrentLength - start;
                if (remaining > 0)
                {
                    count = (int)Math.Min(remaining, bufferSize);
                    // Moved before the write, as MemoryStream does: a destination that sets the position
                    // meanwhile leaves it where it set it, not past it.
                    _position = start + count;
                }
            }
            catch
            {
                lease.Dispose();
                throw;
            }
            finally
            {
                // Left before the destination's write, which may use this stream (on this thread).
                _guard.Exit();
            }

            using (lease)
            {
                if (count == 0)
                {
                    return;
                }

                destination.Write(lease.AsSpan(start, count));
            }
        }
    }

    /// <summary>
    /// Writes the bytes from the position to the end into <paramref name="destination"/> in chunks of at
    /// most <paramref name="bufferSize"/> bytes. Each chunk is copied out under a lease and then written,
    /// so no lease is held while the destination's write is awaited. Cancellation is checked before each
    /// chunk; the position stays after the last chunk written.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><paramref name="destination"/> cannot be written.</exception>
    /// <exception cref="ObjectDisposedException">The stream, the memory under it, or <paramref name="destination"/> was disposed.</exception>
    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        ValidateCopyToArguments(destination, bufferSize);
        ThrowIfDisposed();
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }

        if (ReferenceEquals(destination, this))
        {
            // As MemoryStream copies into itself: at once, synchronously.
            try
            {
                CopyToSelf(bufferSize);
                return Task.CompletedTask;
            }
            catch (Exception e)
            {
                return Task.FromException(e);
            }
        }

        return CopyToAsyncCore(destination, bufferSize, cancellationToken);
    }

    /// <summary>
    /// <see cref="CopyTo(Stream, int)"/> into this stream itself, as <see cref="MemoryStream"/> does it:
    /// the bytes from the position to the end, as they were before the copy, are appended at the end,
    /// and the position ends after them. Room for all of them is made first, so a stream that cannot
    /// grow refuses before writing anything; then they are written in chunks of at most
    /// <paramref name="bufferSize"/> bytes, each from under a lease.
    /// </summary>
    private void CopyToSelf(int bufferSize)
    {
        ThrowIfDisposed();
        Enter();
        long start, end;
        try
        {
            start = _position;
            end = CurrentLength;
            if (start >= end)
            {
                return;
            }

            // Moved first, as MemoryStream moves it (its read) before the write that may throw.
            _position = end;

            // Past MaxLength the first chunk's write throws the IOException a write past it throws.
            if (end - start <= MaxLength - end)
            {
                Reserve(end + (end - start));
            }
        }
        finally
        {
            _guard.Exit();
        }

        for (long offset = start; offset < end;)
        {
            int count = (int)Math.Min(end - offset, bufferSize);
            ThrowIfDisposed();
            Enter();
            MemoryLease<byte> lease;
            try
            {
                lease = BeginOperation();
            }
            finally
            {
                _guard.Exit();
            }

            using (lease)
            {
                Write(lease.AsSpan(offset, count));
            }

            offset += count;
        }
    }

    /// <summary>Copies the contents (all of them, whatever the position) into a new managed array.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">The contents are longer than a managed array can be.</exception>
    public byte[] ToArray()
    {
        ThrowIfDisposed();
        using MemoryLease<byte> lease = BeginOperation();
        long length = CurrentLength;
        if (length > Array.MaxLength)
        {
            ThrowHelper.ThrowInvalidOperation($"The stream holds {length:N0} bytes, more than a managed array can hold; read it in parts.");
        }

        return length == 0 ? [] : lease.AsSpan(0, (int)length).ToArray();
    }

    /// <summary>Disposes the stream and, unless it was created to leave it open, the array or writer under it. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">The array or writer under the stream is leased, acquired or pinned; neither it nor the stream was disposed.</exception>
    protected override void Dispose(bool disposing)
    {
        if (_disposed)
        {
            return;
        }

        if (disposing && !_leaveOpen)
        {
            // First: if it is in use the dispose is refused, and the stream stays usable.
            if (_writer is not null)
            {
                _writer.Dispose();
            }
            else
            {
                _array!.Dispose();
            }
        }

        _disposed = true;
        base.Dispose(disposing);
    }

    private async Task CopyToAsyncCore(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        int size = (int)Math.Clamp(CurrentLength - _position, 1, bufferSize);
        byte[] chunk = ArrayPool<byte>.Shared.Rent(size);
        try
        {
            while (true)
            {
                cancellationToken.ThrowIfCancellationRequested();
                int count = Read(chunk.AsSpan(0, size));
                if (count == 0)
                {
                    return;
                }

                await destination.WriteAsync(chunk.AsMemory(0, count), cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(chunk);
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
    private unsafe long OffsetInBlock(ReadOnlySpan<byte> buffer)
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

    /// <summary>Makes room for <paramref name="end"/> bytes: grows a writer (keeping its old block if <paramref name="keepOld"/>), refuses past an array's capacity.</summary>
    private void Reserve(long end, bool keepOld = false)
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

    /// <summary>Enters as the one thread using the stream; <see cref="InvalidOperationException"/> if another thread is in.</summary>
    private void Enter() => _guard.Enter(this, nameof(NativeMemoryStream), "a write, or a ToArray, CopyTo or Read, which must not see a write run beside them");

    private MemoryLease<byte> BeginOperation() => _writer is null ? _array!.BeginOperation() : _writer.BeginOperation();

    private void ThrowIfDisposed()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_writer is null)
        {
            _array!.ThrowIfInvalid();
        }
        else if (_writer.IsDisposed)
        {
            ThrowHelper.ThrowObjectDisposed(nameof(NativeBufferWriter<byte>));
        }
    }

    private void ThrowIfReadOnly()
    {
        if (!_writable)
        {
            ThrowHelper.ThrowNotSupported("This NativeMemoryStream is read-only.");
        }
    }
}
