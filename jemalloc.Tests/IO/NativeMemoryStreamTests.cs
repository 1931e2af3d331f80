using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class NativeMemoryStreamTests : LeakCheckedTest
{
    private static readonly byte[] Digits = "0123456789"u8.ToArray();

    [Fact]
    public void Over_a_SafeArray_it_reads_the_array_with_every_read_overload_and_returns_0_at_and_past_the_end()
    {
        using var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
        Assert.True(stream.CanRead);
        Assert.True(stream.CanSeek);
        Assert.False(stream.CanWrite);
        Assert.False(stream.CanGrow);
        Assert.Equal(10, stream.Length);
        Assert.Equal(10, stream.Capacity);
        Assert.Equal(0, stream.Position);

        Assert.Equal('0', stream.ReadByte());
        var three = new byte[3];
        Assert.Equal(3, stream.Read(three));
        Assert.Equal("123"u8.ToArray(), three);
        var padded = new byte[6];
        Assert.Equal(2, stream.Read(padded, 1, 2));
        Assert.Equal("\0" + "45\0\0\0", System.Text.Encoding.ASCII.GetString(padded));
        Assert.Equal(6, stream.Position);
        var rest = new byte[100];
        Assert.Equal(4, stream.Read(rest));
        Assert.Equal("6789"u8.ToArray(), rest[..4]);

        Assert.Equal(0, stream.Read(rest));
        Assert.Equal(-1, stream.ReadByte());
        stream.Position = 1000;
        Assert.Equal(0, stream.Read(rest));
        Assert.Equal(-1, stream.ReadByte());
        Assert.Equal(1000, stream.Position);
        stream.Position = 2;
        Assert.Equal(0, stream.Read([]));
        Assert.Equal(2, stream.Position);
    }

    [Fact]
    public void A_read_only_stream_refuses_every_write_with_NotSupportedException_and_changes_nothing()
    {
        using var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
        Assert.Throws<NotSupportedException>(() => stream.Write("ab"u8));
        Assert.Throws<NotSupportedException>(() => stream.Write(new byte[2], 0, 2));
        Assert.Throws<NotSupportedException>(() => stream.WriteByte(1));
        Assert.Throws<NotSupportedException>(() => stream.SetLength(3));
        Assert.Throws<NotSupportedException>(() => stream.WriteAsync(new byte[2]).AsTask().GetAwaiter().GetResult());
        Assert.Equal(Digits, array.ToArray());
        Assert.Equal(10, stream.Length);
        Assert.Equal(0, stream.Position);
    }

    [Fact]
    public void Over_a_writable_array_writes_land_in_the_array_and_a_write_past_its_capacity_is_NotSupported()
    {
        using var array = new SafeArray<byte>(10);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        Assert.True(stream.CanWrite);
        stream.Write("abc"u8);
        stream.WriteByte((byte)'d');
        stream.Write("xxefxx"u8.ToArray(), 2, 2);
        Assert.Equal(6, stream.Position);
        Assert.Equal("abcdef\0\0\0\0"u8.ToArray(), array.ToArray());

        stream.Position = 8;
        Assert.Throws<NotSupportedException>(() => stream.Write("xyz"u8));
        Assert.Throws<NotSupportedException>(() => stream.SetLength(11));
        Assert.Equal(8, stream.Position);
        Assert.Equal(10, stream.Length);
        Assert.Equal("abcdef\0\0\0\0"u8.ToArray(), array.ToArray());
        stream.Write("yz"u8);
        Assert.Equal("abcdef\0\0yz"u8.ToArray(), array.ToArray());
        Assert.Throws<NotSupportedException>(() => stream.WriteByte(1));
    }

    [Fact]
    public void SetLength_cuts_and_zero_extends_within_the_capacity_and_brings_the_position_back()
    {
        using var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        stream.Position = 8;
        stream.SetLength(4);
        Assert.Equal(4, stream.Length);
        Assert.Equal(4, stream.Position);
        Assert.Equal("0123"u8.ToArray(), stream.ToArray());
        Assert.Equal(0, stream.Read(new byte[4]));

        stream.SetLength(7);
        Assert.Equal("0123\0\0\0"u8.ToArray(), stream.ToArray());
        Assert.Equal(4, stream.Position);

        // A write past the length fills the gap with zeros, even where the array held bytes.
        stream.SetLength(2);
        stream.Position = 5;
        stream.WriteByte((byte)'x');
        Assert.Equal(6, stream.Length);
        Assert.Equal("01\0\0\0x"u8.ToArray(), stream.ToArray());

        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(-1));
        Assert.Equal(6, stream.Length);
    }

    [Fact]
    public void Seek_from_each_origin_goes_past_the_end_but_not_before_the_beginning()
    {
        using var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
        Assert.Equal(3, stream.Seek(3, SeekOrigin.Begin));
        Assert.Equal(5, stream.Seek(2, SeekOrigin.Current));
        Assert.Equal('5', stream.ReadByte());
        Assert.Equal(8, stream.Seek(-2, SeekOrigin.End));
        Assert.Equal('8', stream.ReadByte());
        Assert.Equal(15, stream.Seek(5, SeekOrigin.End));
        Assert.Equal(-1, stream.ReadByte());

        Assert.Throws<IOException>(() => stream.Seek(-1, SeekOrigin.Begin));
        Assert.Throws<IOException>(() => stream.Seek(-16, SeekOrigin.Current));
        Assert.Throws<IOException>(() => stream.Seek(-11, SeekOrigin.End));
        Assert.Throws<ArgumentException>(() => stream.Seek(0, (SeekOrigin)7));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Seek(long.MaxValue, SeekOrigin.End));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Position = -1);
        Assert.Equal(15, stream.Position);
    }

    [Fact]
    public void A_write_that_would_pass_the_longest_length_throws_IOException()
    {
        using var stream = new NativeMemoryStream();
        stream.Position = NativeMemoryStream.MaxLength - 1;
        Assert.Throws<IOException>(() => stream.Write("ab"u8));
        Assert.Equal(0, stream.Length);
        Assert.Equal(0, stream.Capacity);
    }

    [Fact]
    public void The_array_and_buffer_arguments_are_checked()
    {
        Assert.Throws<ArgumentNullException>(() => new NativeMemoryStream((NativeBuffer<byte>)null!));
        Assert.Throws<ArgumentNullException>(() => new NativeMemoryStream((NativeBufferWriter<byte>)null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeMemoryStream(initialCapacity: 0));
        var freed = new SafeArray<byte>(4);
        freed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeMemoryStream(freed));
        var disposedWriter = new NativeBufferWriter<byte>();
        disposedWriter.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeMemoryStream(disposedWriter));

        using var stream = new NativeMemoryStream();
        Assert.Throws<ArgumentNullException>(() => stream.Read(null!, 0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Read(new byte[4], -1, 1));
        Assert.ThrowsAny<ArgumentException>(() => stream.Read(new byte[4], 2, 3));
        Assert.Throws<ArgumentNullException>(() => stream.Write(null!, 0, 1));
        Assert.ThrowsAny<ArgumentException>(() => stream.Write(new byte[4], 3, 2));
        Assert.Throws<ArgumentNullException>(() => stream.CopyTo(null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.CopyTo(Stream.Null, 0));
        using var readOnly = new MemoryStream(new byte[4], writable: false);
        Assert.Throws<NotSupportedException>(() => stream.CopyTo(readOnly));
        Assert.Throws<NotSupportedException>(() => stream.CopyToAsync(readOnly).GetAwaiter().GetResult());
    }

    [Fact]
    public void A_growable_stream_grows_zero_fills_gaps_and_SetLength_even_over_reused_bytes()
    {
        using var stream = new NativeMemoryStream();
        Assert.True(stream.CanGrow);
        Assert.True(stream.CanWrite);
        Assert.Equal(0, stream.Length);
        Assert.Equal(0, stream.Read(new byte[4]));
        Assert.Equal(-1, stream.ReadByte());

        var data = new byte[100_000];
        new Random(5).NextBytes(data);
        stream.Write(data);
        Assert.Equal(100_000, stream.Length);
        Assert.True(stream.Capacity >= 100_000);
        Assert.Equal(data, stream.ToArray());

        // The block keeps the old bytes after a cut: the gap and the extension must read as zeros.
        stream.SetLength(10);
        stream.Position = 50;
        stream.Write("z"u8);
        Assert.Equal(51, stream.Length);
        byte[] expected = [.. data[..10], .. new byte[40], (byte)'z'];
        Assert.Equal(expected, stream.ToArray());
        stream.SetLength(60);
        Assert.Equal([.. expected, .. new byte[9]], stream.ToArray());
        Assert.Equal(51, stream.Position);

        stream.Position = 0;
        var read = new byte[60];
        Assert.Equal(60, stream.Read(read));
        Assert.Equal(stream.ToArray(), read);
    }

    [Fact]
    public void A_stream_over_a_writer_shows_its_written_bytes_and_its_writes_are_the_writer_s()
    {
        using var writer = new NativeBufferWriter<byte>();
        "head"u8.CopyTo(writer.GetSpan(4));
        writer.Advance(4);
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            Assert.Equal(4, stream.Length);
            Assert.Equal("head"u8.ToArray(), stream.ToArray());
            stream.Seek(0, SeekOrigin.End);
            stream.Write("+tail"u8);
            Assert.Equal(9, writer.WrittenCount);
            stream.SetLength(6);
            Assert.Equal(6, writer.WrittenCount);
        }

        Assert.Equal("head+t"u8.ToArray(), writer.WrittenSpan.ToArray());
        writer.GetSpan(1)[0] = (byte)'!';
        writer.Advance(1);
        Assert.Equal("head+t!"u8.ToArray(), writer.WrittenSpan.ToArray());
    }

    [Fact]
    public void Disposing_the_stream_disposes_the_array_or_writer_unless_left_open_and_again_does_nothing()
    {
        var array = new SafeArray<byte>(4);
        var stream = new NativeMemoryStream(array);
        stream.Dispose();
        Assert.False(array.IsValid);
        stream.Dispose();

        using var kept = new SafeArray<byte>(4);
        new NativeMemoryStream(kept, leaveOpen: true).Dispose();
        Assert.True(kept.IsValid);

        var writer = new NativeBufferWriter<byte>(16);
        new NativeMemoryStream(writer).Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);

        using var keptWriter = new NativeBufferWriter<byte>(16);
        new NativeMemoryStream(keptWriter, leaveOpen: true).Dispose();
        Assert.Equal(0, keptWriter.WrittenCount);

        // The stream's own memory is freed by its dispose: the leak check after the test sees to it.
        using var own = new NativeMemoryStream(1000);
        own.Write(new byte[5000]);
    }

    [Fact]
    public void After_the_stream_is_disposed_every_member_throws_ObjectDisposedException_and_Can_members_say_false()
    {
        using var array = new SafeArray<byte>(Digits);
        var stream = new NativeMemoryStream(array, leaveOpen: true);
        stream.Dispose();
        AssertDead(stream);
        Assert.True(array.IsValid);
    }

    [Fact]
    public void When_the_owner_disposes_the_array_under_the_stream_every_member_throws_ObjectDisposedException()
    {
        var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        Assert.Equal('0', stream.ReadByte());
        array.Dispose();
        AssertDead(stream);
    }

    [Fact]
    public void When_the_owner_disposes_the_writer_under_the_stream_every_member_throws_ObjectDisposedException()
    {
        var writer = new NativeBufferWriter<byte>();
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.Write(Digits);
        writer.Dispose();
        AssertDead(stream);
        // The stream names what was disposed under it: the writer.
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => stream.Length);
    }

    [Fact]
    public void A_dispose_of_the_array_during_an_operation_is_refused_and_the_operation_completes()
    {
        using var array = new SafeArray<byte>(Digits);
        using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
        var refusals = new List<Exception>();
        var destination = new CallbackStream(() => refusals.Add(Assert.ThrowsAny<Exception>(array.Dispose)));
        stream.CopyTo(destination, bufferSize: 4);
        Assert.Equal(3, refusals.Count);
        Assert.All(refusals, e => Assert.IsType<InvalidOperationException>(e));
        Assert.Equal(Digits, destination.Written);
        Assert.True(array.IsValid);
    }

    [Fact]
    public void A_dispose_or_growth_of_the_writer_during_an_operation_is_refused_and_nothing_moves()
    {
        using var writer = new NativeBufferWriter<byte>(10);
        using var source = new NativeMemoryStream(writer, leaveOpen: true);
        source.Write(Digits);
        source.Position = 0;
        using var sameWriter = new NativeMemoryStream(writer, leaveOpen: true);
        sameWriter.Seek(0, SeekOrigin.End);

        // While the copy holds its lease on the block, the block can neither be freed nor moved.
        var refusals = new List<Exception>();
        var destination = new CallbackStream(() =>
        {
            refusals.Add(Assert.ThrowsAny<Exception>(writer.Dispose));
            refusals.Add(Assert.ThrowsAny<Exception>(() => sameWriter.Write(new byte[1000])));
        });
        source.CopyTo(destination);
        Assert.Equal(2, refusals.Count);
        Assert.All(refusals, e => Assert.IsType<InvalidOperationException>(e));
        Assert.Equal(Digits, destination.Written);
        Assert.Equal(Digits, writer.WrittenSpan.ToArray());

        // Afterwards both go through.
        sameWriter.Write(new byte[1000]);
        Assert.Equal(1010, writer.WrittenCount);
    }

    [Fact]
    public void Reads_racing_the_owner_s_dispose_complete_with_the_array_s_bytes_or_throw_ObjectDisposedException()
    {
        const int length = 1 << 20;
        for (int round = 0; round < 20; round++)
        {
            var array = new SafeArray<byte>(length, (byte)0x5A);
            using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
            var failures = new List<string>();
            using var started = new ManualResetEventSlim();
            var reader = new Thread(() =>
            {
                var buffer = new byte[length / 4];
                started.Set();
                try
                {
                    while (true)
                    {
                        stream.Position = 0;
                        while (stream.Read(buffer) is int read and > 0)
                        {
                            if (buffer.AsSpan(0, read).ContainsAnyExcept((byte)0x5A))
                            {
                                failures.Add("a read returned bytes that are not the array's");
                            }
                        }
                    }
                }
                catch (ObjectDisposedException)
                {
                    // The owner won: the one allowed way for a read to fail.
                }
                catch (Exception e)
                {
                    failures.Add(e.ToString());
                }
            });
            reader.Start();
            Assert.True(started.Wait(Workers.DefaultTimeout), "The reader did not start.");
            int refused = 0;
            while (true)
            {
                try
                {
                    array.Dispose();
                    break;
                }
                catch (InvalidOperationException)
                {
                    refused++;
                    Thread.Yield();
                }
            }

            Assert.True(reader.Join(TimeSpan.FromSeconds(30)), "The reader did not stop after the dispose.");
            Assert.Empty(failures);
            Assert.False(array.IsValid);
        }
    }

    [Fact]
    public async Task Async_members_complete_with_the_sync_results_and_honour_cancellation_before_touching_anything()
    {
        using var stream = new NativeMemoryStream();
        await stream.WriteAsync(Digits);
#pragma warning disable CA1835 // The array overloads are what is tested here.
        await stream.WriteAsync(Digits, 0, 2);
#pragma warning restore CA1835
        Assert.Equal(12, stream.Length);
        stream.Position = 0;
        var buffer = new byte[5];
        Assert.Equal(5, await stream.ReadAsync(buffer));
#pragma warning disable CA1835 // The array overloads are what is tested here.
        Assert.Equal(3, await stream.ReadAsync(buffer, 1, 3));
#pragma warning restore CA1835
        Assert.Equal("05674"u8.ToArray(), buffer);
        await stream.FlushAsync();

        using var canceled = new CancellationTokenSource();
        canceled.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.ReadAsync(buffer, canceled.Token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.ReadAsync(buffer, 0, 1, canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.WriteAsync(Digits, canceled.Token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.WriteAsync(Digits, 0, 1, canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.FlushAsync(canceled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.CopyToAsync(Stream.Null, canceled.Token));
        Assert.Equal(8, stream.Position);
        Assert.Equal(12, stream.Length);

        // Failures come back in the task, as MemoryStream's do.
        stream.Dispose();
        Task<int> failed = stream.ReadAsync(buffer, 0, 1);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => failed);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => stream.WriteAsync(Digits).AsTask());
    }

    [Fact]
    public async Task CopyToAsync_stops_with_cancellation_between_chunks_leaving_the_position_after_the_last_chunk()
    {
        using var array = new SafeArray<byte>(100, (byte)1);
        using var stream = new NativeMemoryStream(array, writable: false, leaveOpen: true);
        using var cancel = new CancellationTokenSource();
        var destination = new CallbackStream(cancel.Cancel);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.CopyToAsync(destination, 10, cancel.Token));
        Assert.Equal(10, destination.Written.Length);
        Assert.Equal(10, stream.Position);
    }

    [Fact]
    public void A_stream_can_be_read_by_StreamReader_and_written_by_StreamWriter()
    {
        using var stream = new NativeMemoryStream();
        using (var text = new StreamWriter(stream, leaveOpen: true))
        {
            text.Write("h\u00e9llo, native");
        }

        stream.Position = 0;
        using var reader = new StreamReader(stream, leaveOpen: true);
        Assert.Equal("h\u00e9llo, native", reader.ReadToEnd());
    }

    private static void AssertDead(NativeMemoryStream stream)
    {
        Assert.False(stream.CanRead);
        Assert.False(stream.CanWrite);
        Assert.False(stream.CanSeek);
        Assert.Throws<ObjectDisposedException>(() => stream.Length);
        Assert.Throws<ObjectDisposedException>(() => stream.Capacity);
        Assert.Throws<ObjectDisposedException>(() => stream.Position);
        Assert.Throws<ObjectDisposedException>(() => stream.Position = 0);
        Assert.Throws<ObjectDisposedException>(() => stream.Read(new byte[1]));
        Assert.Throws<ObjectDisposedException>(() => stream.Read(new byte[1], 0, 1));
        Assert.Throws<ObjectDisposedException>(() => stream.ReadByte());
        Assert.Throws<ObjectDisposedException>(() => stream.Write(new byte[1]));
        Assert.Throws<ObjectDisposedException>(() => stream.WriteByte(1));
        Assert.Throws<ObjectDisposedException>(() => stream.Seek(0, SeekOrigin.Begin));
        Assert.Throws<ObjectDisposedException>(() => stream.SetLength(0));
        Assert.Throws<ObjectDisposedException>(stream.ToArray);
        Assert.Throws<ObjectDisposedException>(() => stream.CopyTo(Stream.Null));
        Assert.Throws<ObjectDisposedException>(() => stream.CopyToAsync(Stream.Null).GetAwaiter().GetResult());
        Assert.Throws<ObjectDisposedException>(() => stream.ReadAsync(new byte[1]).AsTask().GetAwaiter().GetResult());
    }
}
