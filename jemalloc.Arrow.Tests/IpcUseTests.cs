namespace jemalloc.Arrow.Tests;

/// <summary>
/// Misuse of the IPC reader and writer: a disposed reader, a second thread calling in or disposing
/// while a read or write is under way, a column disposed under a write, bad arguments. Each is an
/// exception that changes nothing, never a crash.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcUseTests
{
    private const long Rows = 100_000;

    [Fact]
    public void A_disposed_reader_throws_ObjectDisposedException_and_closes_its_stream()
    {
        var stream = new MemoryStream(WriteLongs());
        var reader = new ArrowIpcReader(stream);
        reader.Dispose();
        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadColumn<long>("v"));
        Assert.False(stream.CanRead);

        var kept = new MemoryStream(WriteLongs());
        new ArrowIpcReader(kept, leaveOpen: true).Dispose();
        Assert.True(kept.CanRead);
    }

    [Fact]
    public async Task A_second_thread_cannot_read_from_or_dispose_a_reader_while_a_read_is_under_way()
    {
        var stream = new GatedStream(WriteLongs());
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream, leaveOpen: true))
        {
            stream.Armed = true;
            Task<long> first = Task.Run(() =>
            {
                using HugeArray<long> values = reader.ReadColumn<long>("v");
                return values.VectorSum();
            });
            Assert.True(stream.Entered.Wait(TimeSpan.FromSeconds(30)));

            Assert.Contains("one thread at a time", Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("v")).Message, StringComparison.Ordinal);
            Assert.Throws<InvalidOperationException>(reader.Dispose);
            stream.Release.Set();
            Assert.Equal(Enumerable.Range(0, (int)Rows).Sum(r => r * 5L), await first);

            // The refused dispose changed nothing: the reader still reads.
            using HugeArray<long> again = reader.ReadColumn<long>("v");
            Assert.Equal(Rows, again.Length);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public async Task A_column_cannot_be_disposed_and_the_writer_not_used_while_a_write_is_under_way()
    {
        using var values = new HugeArray<long>(Rows, 7L);
        var writer = new ArrowIpcWriter().Add("v", values);
        var output = new GatedStream([]) { Armed = true };
        Task write = Task.Run(() => writer.Write(output, ArrowIpcFormat.Stream));
        Assert.True(output.Entered.Wait(TimeSpan.FromSeconds(30)));

        Assert.Throws<InvalidOperationException>(values.Dispose);
        Assert.Throws<InvalidOperationException>(() => writer.Add("w", values));
        Assert.Throws<InvalidOperationException>(() => writer.Write(new MemoryStream()));
        output.Release.Set();
        await write;
        Assert.True(values.IsValid);

        output.Armed = false;
        output.Position = 0;
        using var reader = new ArrowIpcReader(output, leaveOpen: true);
        using HugeArray<long> back = reader.ReadColumn<long>("v");
        Assert.Equal(7L * Rows, back.VectorSum());
    }

    [Fact]
    public void The_writer_refuses_bad_columns_and_arguments_with_the_reason()
    {
        using var values = new HugeArray<long>(10);
        using var shorter = new HugeArray<int>(9);
        using var bitmap = new HugeArray<byte>(1);
        var writer = new ArrowIpcWriter();
        Assert.Throws<InvalidOperationException>(() => writer.Write(new MemoryStream()));
        writer.Add("v", values);
        Assert.Contains("already", Assert.Throws<ArgumentException>(() => writer.Add("v", values)).Message, StringComparison.Ordinal);
        Assert.Contains("9 rows", Assert.Throws<ArgumentException>(() => writer.Add("s", shorter)).Message, StringComparison.Ordinal);
        Assert.Contains("needs 2 bytes", Assert.Throws<ArgumentException>(() => writer.Add("w", values, bitmap)).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => writer.Add(string.Empty, values));
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.AddTime("t", shorter, Apache.Arrow.Types.TimeUnit.Nanosecond));
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.BatchSize = 1001);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.BatchSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.Write(new MemoryStream(), (ArrowIpcFormat)7));
        using var decimals = new HugeArray<decimal>(10);
        Assert.Throws<NotSupportedException>(() => writer.Add("d", decimals));
        Assert.Equal(1, writer.ColumnCount);

        var disposed = new HugeArray<long>(10);
        writer.Add("gone", disposed);
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(new MemoryStream()));
    }

    [Fact]
    public void A_failed_write_to_a_path_leaves_no_file()
    {
        string path = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-" + Guid.NewGuid().ToString("N") + ".arrow");
        var disposed = new HugeArray<long>(10);
        var writer = new ArrowIpcWriter().Add("gone", disposed);
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void Invalid_data_in_a_file_names_the_file()
    {
        string path = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-" + Guid.NewGuid().ToString("N") + ".arrow");
        try
        {
            byte[] bytes = WriteLongs();
            File.WriteAllBytes(path, bytes[..(bytes.Length / 2)]);
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(path));
            Assert.Contains(path, e.Message, StringComparison.Ordinal);
            Assert.Contains("body", e.Message, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void The_reader_refuses_bad_arguments_and_an_unseekable_stream()
    {
        Assert.Throws<FileNotFoundException>(() => new ArrowIpcReader(Path.Combine(Path.GetTempPath(), "no-such-file.arrow")));
        Assert.Throws<ArgumentException>(() => new ArrowIpcReader(string.Empty));
        Assert.Throws<ArgumentNullException>(() => new ArrowIpcReader((Stream)null!));
        var unseekable = new GatedStream(WriteLongs()) { Seekable = false };
        Assert.Contains("seekable", Assert.Throws<ArgumentException>(() => new ArrowIpcReader(unseekable)).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => new ArrowIpcReader(new MemoryStream(WriteLongs()), (ArrowIpcFormat)9));

        // A stream read as a file, and a file as a stream.
        Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(new MemoryStream(WriteLongs()), ArrowIpcFormat.File));
        var stream = new MemoryStream();
        using (var values = new HugeArray<long>(10))
        {
            new ArrowIpcWriter().Add("v", values).Write(stream, ArrowIpcFormat.File);
        }

        Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(new MemoryStream(stream.ToArray()), ArrowIpcFormat.Stream));
    }

    private static byte[] WriteLongs()
    {
        using var values = new HugeArray<long>(Rows);
        for (long r = 0; r < Rows; r++)
        {
            values[r] = r * 5;
        }

        var stream = new MemoryStream();
        new ArrowIpcWriter { BatchSize = 4096 }.Add("v", values).Write(stream, ArrowIpcFormat.Stream);
        return stream.ToArray();
    }

    // A memory stream that, once armed, stops in its next large read or write until released, so a
    // test can act while a reader or writer is inside a call.
    private sealed class GatedStream(byte[] bytes) : MemoryStream
    {
        private readonly MemoryStream _inner = bytes.Length == 0 ? new MemoryStream() : new MemoryStream(bytes, writable: false);

        public bool Armed { get; set; }

        public bool Seekable { get; init; } = true;

        public ManualResetEventSlim Entered { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public override bool CanSeek => Seekable;

        public override long Length => _inner.Length;

        public override long Position { get => _inner.Position; set => _inner.Position = value; }

        public override bool CanWrite => true;

        public override int Read(Span<byte> buffer)
        {
            Gate(buffer.Length);
            return _inner.Read(buffer);
        }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override long Seek(long offset, SeekOrigin loc) => _inner.Seek(offset, loc);

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            Gate(buffer.Length);
            _inner.Write(buffer);
        }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        private void Gate(int length)
        {
            if (Armed && length >= 1024 && !Entered.IsSet)
            {
                Entered.Set();
                Release.Wait(TimeSpan.FromSeconds(30));
            }
        }
    }
}
