using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A <see cref="NativeMemoryStream"/> past 2 GiB, over a <see cref="HugeArray{T}"/> and growing. Each
/// test touches about 2 GiB: run test runs that include it under <c>flock /tmp/jemalloc-bigmem.lock</c>
/// on shared machines.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeMemoryStreamBigMemoryTests : LeakCheckedTest
{
    private const long Boundary = 1L << 31;
    private const long Length = Boundary + 4097;

    [Fact]
    public void Over_a_HugeArray_past_2_GiB_it_seeks_reads_and_writes_across_the_boundary_and_to_the_end()
    {
        using var array = new HugeArray<byte>(Length);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        Assert.Equal(Length, stream.Length);
        Assert.Equal(Length, stream.Capacity);

        Assert.Equal(Boundary - 2, stream.Seek(Boundary - 2, SeekOrigin.Begin));
        stream.Write([1, 2, 3, 4]);
        Assert.Equal(Boundary + 2, stream.Position);
        Assert.Equal(3, array[Boundary]);

        stream.Seek(-6, SeekOrigin.Current);
        var read = new byte[6];
        Assert.Equal(6, stream.Read(read));
        Assert.Equal([0, 0, 1, 2, 3, 4], read);

        stream.Seek(-1, SeekOrigin.End);
        stream.WriteByte(9);
        Assert.Equal(Length, stream.Position);
        Assert.Throws<NotSupportedException>(() => stream.WriteByte(1));
        stream.Seek(-1, SeekOrigin.End);
        Assert.Equal(9, stream.ReadByte());
        Assert.Equal(-1, stream.ReadByte());

        stream.SetLength(Boundary + 1);
        Assert.Equal(Boundary + 1, stream.Length);
        Assert.Equal(Boundary + 1, stream.Position);
        Assert.Throws<InvalidOperationException>(stream.ToArray);
    }

    [Fact]
    public async Task A_growable_stream_passes_2_GiB_and_its_copy_reaches_the_destination_whole()
    {
        using var stream = new NativeMemoryStream();
        stream.Position = Boundary + 10;
        stream.Write([7, 8]);
        Assert.Equal(Boundary + 12, stream.Length);
        Assert.True(stream.Capacity >= Boundary + 12);

        // The gap up to the write reads as zeros, then the written bytes.
        stream.Position = Boundary - 1;
        var read = new byte[20];
        Assert.Equal(13, stream.Read(read));
        Assert.Equal([.. new byte[11], 7, 8], read[..13]);

        var counter = new CountingStream();
        stream.Position = 0;
        await stream.CopyToAsync(counter);
        Assert.Equal(Boundary + 12, counter.Count);
        Assert.Equal(15, counter.Sum);
    }

    /// <summary>Counts and sums the bytes written to it, keeping none.</summary>
    private sealed class CountingStream : Stream
    {
        public long Count { get; private set; }

        public long Sum { get; private set; }

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => Count;

        public override long Position
        {
            get => Count;
            set => throw new NotSupportedException();
        }

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            Count += buffer.Length;
            if (buffer.ContainsAnyExcept((byte)0))
            {
                foreach (byte b in buffer)
                {
                    Sum += b;
                }
            }
        }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        // Synchronous, so the test's awaits resume on its own thread: a free on a thread-pool thread
        // would leave that thread's jemalloc cache behind.
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
}
