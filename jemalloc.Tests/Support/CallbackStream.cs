namespace jemalloc.Tests.Support;

/// <summary>
/// A write-only, non-seekable destination that hands every chunk written to it to a callback, on the
/// writing thread (which may misbehave: dispose or grow the source it is copied from), and keeps a copy
/// of each chunk unless told not to (for copies of gigabytes).
/// </summary>
/// <remarks>
/// The asynchronous writes complete synchronously, so a test's awaits resume on its own thread: a
/// free on a thread-pool thread would leave that thread's jemalloc cache behind the leak check.
/// </remarks>
internal sealed class CallbackStream(Action<ReadOnlySpan<byte>> onWrite, bool keepChunks = true) : Stream
{
    /// <summary>Calls <paramref name="onWrite"/> for each chunk, keeping every chunk.</summary>
    public CallbackStream(Action onWrite)
        : this(_ => onWrite())
    {
    }

    /// <summary>The chunks written, in order (empty when they are not kept).</summary>
    public List<byte[]> Received { get; } = [];

    /// <summary>The chunks written, joined.</summary>
    public byte[] Written => [.. Received.SelectMany(chunk => chunk)];

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        if (keepChunks)
        {
            Received.Add(buffer.ToArray());
        }

        onWrite(buffer);
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        Write(buffer.AsSpan(offset, count));
        return Task.CompletedTask;
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Write(buffer.Span);
        return ValueTask.CompletedTask;
    }

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
