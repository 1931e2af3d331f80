using jemalloc.IO;
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
public sealed partial class NativeMemoryStream : Stream, IWriterGuarded
{
    /// <summary>
    /// The longest a stream can be, and the furthest its position can go, in bytes: jemalloc's largest
    /// block on a 64-bit process (7 × 2^60 bytes). Past it, <see cref="SetLength"/>, the
    /// <see cref="Position"/> setter and <see cref="Seek"/> throw <see cref="ArgumentOutOfRangeException"/>
    /// and a write throws <see cref="IOException"/>, as <see cref="MemoryStream"/> does past its own limit
    /// (<see cref="int.MaxValue"/>); below it, a length the memory cannot hold is an <see cref="OutOfMemoryException"/>.
    /// </summary>
    public const long MaxLength = 7L << 60;

    private readonly bool _writable;
    private readonly bool _leaveOpen;

    // The array or writer under the stream, read and written at the position.
    private StreamMemory _memory;
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
        _memory = new StreamMemory(buffer);
        _writable = true;
        _leaveOpen = leaveOpen;
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
        _memory = new StreamMemory(array);
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
    public bool CanGrow => _memory.CanGrow;

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
            return _memory.Capacity;
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

    private bool IsUsable => !_disposed && _memory.IsUsable;

    private long CurrentLength => _memory.Length;

    /// <summary>Reads up to <paramref name="buffer"/>'s length of bytes from the position; 0 at or past the end.</summary>
    /// <exception cref="ObjectDisposedException">The stream, or the memory under it, was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the stream.</exception>
    public override int Read(Span<byte> buffer)
    {
        ThrowIfDisposed();
        Enter();
        try
        {
            int count = _memory.Read(_position, buffer);
            _position += count;
            return count;
        }
        finally
        {
            _guard.Exit();
        }
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
            int value = _memory.ReadByte(_position);
            if (value >= 0)
            {
                _position++;
            }

            return value;
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
            _position = _memory.Write(_position, buffer);
        }
        finally
        {
            _guard.Exit();
        }
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
            _memory.SetLength(value);
            if (_position > value)
            {
                _position = value;
            }
        }
        finally
        {
            _guard.Exit();
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
            _memory.Dispose();
        }

        _disposed = true;
        base.Dispose(disposing);
    }

    /// <summary>Enters as the one thread using the stream; <see cref="InvalidOperationException"/> if another thread is in.</summary>
    private void Enter() => _guard.Enter(this, nameof(NativeMemoryStream), "a write, or a ToArray, CopyTo or Read, which must not see a write run beside them");

    private MemoryLease<byte> BeginOperation() => _memory.BeginOperation();

    private void ThrowIfDisposed()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        _memory.ThrowIfDisposed();
    }

    private void ThrowIfReadOnly()
    {
        if (!_writable)
        {
            ThrowHelper.ThrowNotSupported("This NativeMemoryStream is read-only.");
        }
    }
}
