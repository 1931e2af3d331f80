using System.Buffers;

namespace jemalloc;

// The copies out of a NativeMemoryStream: CopyTo in chunks straight from native memory, each under a
// lease; CopyToAsync in chunks copied out first, so no lease is held across an await; and a copy into
// the stream itself, as MemoryStream does it.
public sealed partial class NativeMemoryStream
{
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
                _memory.Reserve(end + (end - start));
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
}
