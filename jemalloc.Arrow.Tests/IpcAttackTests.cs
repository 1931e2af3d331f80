#pragma warning disable IDE0011, xUnit1031, SA1107, SA1501, SA1503, SA1502, IDE0022, CA2000
using System.Buffers.Binary;
using System.Globalization;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>Hostile review 2: forged IPC built with the library's own FlatBuffers builder, lying streams, misuse.</summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcAttackTests
{
    private static FlatObject Message(byte type, FlatObject header, long body) =>
        FlatObject.Table().Scalar(0, 2, 4).Scalar(1, 1, type).Reference(2, header).Scalar(3, 8, body);

    private static FlatObject Schema<T>() where T : unmanaged =>
        IpcSchema.Write([("v", IpcType.Of<T>(), true)], bigEndian: false);

    private static FlatObject Batch(long length, (long, long)[] nodes, (long, long)[] buffers)
    {
        byte[] n = new byte[16 * nodes.Length];
        for (int i = 0; i < nodes.Length; i++) { BinaryPrimitives.WriteInt64LittleEndian(n.AsSpan(16 * i), nodes[i].Item1); BinaryPrimitives.WriteInt64LittleEndian(n.AsSpan((16 * i) + 8), nodes[i].Item2); }
        byte[] b = new byte[16 * buffers.Length];
        for (int i = 0; i < buffers.Length; i++) { BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(16 * i), buffers[i].Item1); BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan((16 * i) + 8), buffers[i].Item2); }
        return FlatObject.Table().Scalar(0, 8, length).Reference(1, FlatObject.Structs(n, nodes.Length, 8)).Reference(2, FlatObject.Structs(b, buffers.Length, 8));
    }

    private static void Put(MemoryStream s, FlatObject message, byte[]? body = null)
    {
        byte[] metadata = FlatBufferBuilder.Build(message);
        Span<byte> head = stackalloc byte[8];
        BinaryPrimitives.WriteInt32LittleEndian(head, -1);
        BinaryPrimitives.WriteInt32LittleEndian(head[4..], metadata.Length);
        s.Write(head);
        s.Write(metadata);
        if (body is not null) s.Write(body);
    }

    private static byte[] StreamOf(params (FlatObject Message, byte[]? Body)[] messages)
    {
        var s = new MemoryStream();
        foreach ((FlatObject m, byte[]? body) in messages) Put(s, m, body);
        return s.ToArray();
    }

    [Fact]
    public void Attack_batch_lengths_summing_past_long_MaxValue_are_invalid_data_not_OverflowException()
    {
        long huge = (long.MaxValue / 2) + 10;
        FlatObject batch = Batch(huge, [(huge, 0)], [(0, 0), (0, 0)]);
        byte[] bytes = StreamOf((Message(1, Schema<long>(), 0), null), (Message(3, batch, 0), null), (Message(3, Batch(huge, [(huge, 0)], [(0, 0), (0, 0)]), 0), null));
        Exception? e = Record.Exception(() =>
        {
            using var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream);
            _ = reader.RowCount;
        });
        Assert.IsType<InvalidDataException>(e);
    }

    [Fact]
    public void Attack_a_batch_of_2_pow_31_plus_rows_over_a_tiny_body_is_invalid_data_on_read()
    {
        long rows = (1L << 31) + 5;
        byte[] bytes = StreamOf((Message(1, Schema<long>(), 0), null), (Message(3, Batch(rows, [(rows, 0)], [(0, 0), (0, 64)]), 64), new byte[64]));
        long live = AllocationLedger.LiveCount;
        using var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream);
        Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("v").Dispose());
        Assert.Throws<InvalidDataException>(() => reader.ReadColumn<long>("v", AllocationOptions.Default, out _).Dispose());
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_a_record_batch_message_whose_header_is_a_schema_table_is_invalid_data_or_reads_nothing()
    {
        byte[] bytes = StreamOf((Message(1, Schema<long>(), 0), null), (Message(3, Schema<long>(), 0), null));
        Exception? e = Record.Exception(() =>
        {
            using var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream);
            if (reader.RowCount > 0) reader.ReadColumn<long>("v").Dispose();
        });
        Assert.True(e is null or InvalidDataException or InvalidOperationException, e?.ToString());
    }

    [Fact]
    public void Attack_a_schema_message_whose_header_is_a_record_batch_is_invalid_data()
    {
        byte[] bytes = StreamOf((Message(1, Batch(3, [(3, 0)], [(0, 0), (0, 24)]), 0), null));
        Exception? e = Record.Exception(() => new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream).Dispose());
        Assert.True(e is null or InvalidDataException, e?.ToString());
    }

    [Fact]
    public void Attack_a_stream_of_100k_empty_batches_opens_quickly_and_has_no_rows()
    {
        var list = new List<(FlatObject, byte[]?)> { (Message(1, Schema<long>(), 0), null) };
        for (int i = 0; i < 100_000; i++) list.Add((Message(3, Batch(0, [(0, 0)], [(0, 0), (0, 0)]), 0), null));
        byte[] bytes = StreamOf([.. list]);
        long live = AllocationLedger.LiveCount;
        var watch = System.Diagnostics.Stopwatch.StartNew();
        using (var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream))
        {
            Assert.Equal(0, reader.RowCount);
            Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("v").Dispose());
        }

        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(20), watch.Elapsed.ToString());
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_a_footer_block_pointing_into_the_middle_of_a_message_is_invalid_data()
    {
        byte[] file = WriteFile(ArrowIpcFormat.File, 100, 0);
        // The footer's first block's offset: find the Int64 8 (the first message after the 8-byte magic) and nudge it.
        int footerLength = BinaryPrimitives.ReadInt32LittleEndian(file.AsSpan(file.Length - 10));
        int footerStart = file.Length - 10 - footerLength;
        long live = AllocationLedger.LiveCount;
        int nudged = 0;
        long batchOffset = 16 + BinaryPrimitives.ReadInt32LittleEndian(file.AsSpan(12));
        for (int at = footerStart; at + 8 <= file.Length - 10; at++)
        {
            long value = BinaryPrimitives.ReadInt64LittleEndian(file.AsSpan(at));
            if (value == batchOffset)
            {
                foreach (long delta in new[] { 4L, 8, 12, 16, -8, -4 })
                {
                    byte[] forged = (byte[])file.Clone();
                    BinaryPrimitives.WriteInt64LittleEndian(forged.AsSpan(at), value + delta);
                    Exception? e = Record.Exception(() => { using var r = new ArrowIpcReader(new MemoryStream(forged)); if (r.RowCount > 0) r.ReadColumn<long>("v").Dispose(); });
                    Assert.True(e is InvalidDataException, e?.ToString() ?? "no exception at delta " + delta);
                    nudged++;
                }
            }
        }

        Assert.True(nudged > 0);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    private static byte[] WriteFile(ArrowIpcFormat format, long rows, long batchSize)
    {
        using var values = new HugeArray<long>(rows);
        for (long r = 0; r < rows; r++) values[r] = r * 7;
        var stream = new MemoryStream();
        var writer = new ArrowIpcWriter().Add("v", values);
        if (batchSize > 0) writer.BatchSize = batchSize;
        writer.Write(stream, format);
        return stream.ToArray();
    }

    [Fact]
    public void Attack_a_stream_claiming_a_longer_Length_than_it_has_is_invalid_data_and_leaks_nothing()
    {
        byte[] file = WriteFile(ArrowIpcFormat.Stream, 1000, 0);
        long live = AllocationLedger.LiveCount;
        Exception? e = Record.Exception(() =>
        {
            using var r = new ArrowIpcReader(new LyingStream(file[..(file.Length - 200)], file.Length), ArrowIpcFormat.Stream);
            r.ReadColumn<long>("v").Dispose();
        });
        Assert.IsType<InvalidDataException>(e);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_a_stream_giving_one_byte_a_read_still_reads_correctly()
    {
        byte[] file = WriteFile(ArrowIpcFormat.File, 1000, 80);
        using var r = new ArrowIpcReader(new LyingStream(file, file.Length) { OneByte = true });
        using HugeArray<long> v = r.ReadColumn<long>("v");
        for (long i = 0; i < 1000; i++) Assert.Equal(i * 7, v[i]);
    }

    [Fact]
    public void Attack_a_stream_throwing_IOException_mid_read_propagates_it_and_leaks_nothing()
    {
        byte[] file = WriteFile(ArrowIpcFormat.File, 100_000, 10_000);
        long live = AllocationLedger.LiveCount;
        var s = new LyingStream(file, file.Length);
        using (var r = new ArrowIpcReader(s))
        {
            s.ThrowAfter = 3;
            Assert.Throws<IOException>(() => r.ReadColumn<long>("v").Dispose());
            s.ThrowAfter = -1;
            using HugeArray<long> v = r.ReadColumn<long>("v");
            Assert.Equal(99_999 * 7L, v[99_999]);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_a_stream_whose_Length_throws_is_an_argument_or_io_error_not_NotSupportedException()
    {
        byte[] file = WriteFile(ArrowIpcFormat.File, 10, 0);
        Exception? e = Record.Exception(() => new ArrowIpcReader(new LyingStream(file, file.Length) { LengthThrows = true }).Dispose());
        Assert.True(e is ArgumentException or IOException or InvalidDataException or NotSupportedException, e?.GetType().Name);
    }

    [Fact]
    public void Attack_dispose_and_read_from_another_thread_during_a_read_throw_InvalidOperationException()
    {
        byte[] file = WriteFile(ArrowIpcFormat.File, 100_000, 1000);
        long live = AllocationLedger.LiveCount;
        var s = new LyingStream(file, file.Length);
        var reader = new ArrowIpcReader(s);
        using var entered = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        s.Block = (entered, release);
        Task<HugeArray<long>> read = Task.Run(() => reader.ReadColumn<long>("v"));
        Assert.True(entered.Wait(TimeSpan.FromSeconds(20)));
        Assert.Throws<InvalidOperationException>(() => reader.Dispose());
        Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<long>("v").Dispose());
        s.Block = null;
        release.Set();
        using (HugeArray<long> v = read.Result)
        {
            Assert.Equal(99_999 * 7L, v[99_999]);
        }

        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadColumn<long>("v").Dispose());
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_writer_misuse_throws_conventional_exceptions_and_writes_nothing()
    {
        long live = AllocationLedger.LiveCount;
        using (var a = new HugeArray<long>(10))
        using (var b = new HugeArray<long>(11))
        {
            var s = new MemoryStream();
            Exception? e = Record.Exception(() => new ArrowIpcWriter().Add("a", a).Add("b", b).Write(s));
            Assert.IsAssignableFrom<ArgumentException>(e);
            Assert.Equal(0, s.Length);
            foreach (long size in new[] { 0L, -1L, long.MinValue })
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => new ArrowIpcWriter { BatchSize = size });
            }

            Assert.Throws<ArgumentOutOfRangeException>(() => new ArrowIpcWriter { BatchSize = 3 });
            var w = new ArrowIpcWriter { BatchSize = 8 }.Add("a", a);
            var roundTrip = new MemoryStream();
            w.Write(roundTrip);
            roundTrip.Position = 0;
            using var r = new ArrowIpcReader(roundTrip);
            Assert.Equal(2, r.BatchCount);
            Assert.Throws<ArgumentException>(() => new ArrowIpcWriter().Add("a", a).Add("a", a));
        }

        var disposed = new HugeArray<long>(5);
        var writer = new ArrowIpcWriter().Add("d", disposed);
        disposed.Dispose();
        var target = new MemoryStream();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(target));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_decimal_and_fixed_binary_ToArrow_after_their_arrays_were_disposed_throw_ObjectDisposedException()
    {
        long live = AllocationLedger.LiveCount;
        var values = new HugeArray<Int128>(4);
        var dec = new DecimalColumn(values, null, 4, 38, 38);
        dec.Dispose();
        Assert.Throws<ObjectDisposedException>(() => dec.ToArrow().Dispose());
        var data = new HugeArray<byte>(64);
        var fsb = new FixedSizeBinaryColumn(data, null, 4, 16);
        data.Dispose();
        Exception? e = Record.Exception(() => fsb.ToArrow().Dispose());
        Assert.IsType<ObjectDisposedException>(e);
        fsb.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Attack_a_dictionary_encoded_column_read_as_a_plain_one_is_refused_and_the_column_after_it_still_reads()
    {
        FlatObject indexType = FlatObject.Table().Scalar(0, 4, 32).Scalar(1, 1, 1);
        FlatObject dictField = FlatObject.Table().Reference(0, FlatObject.String("s")).Scalar(1, 1, 1).Scalar(2, 1, IpcTypeCode.Utf8).Reference(3, FlatObject.Table())
            .Reference(4, FlatObject.Table().Scalar(0, 8, 0).Reference(1, indexType)).Reference(5, FlatObject.Tables([]));
        FlatObject longField = FlatObject.Table().Reference(0, FlatObject.String("w")).Scalar(1, 1, 0).Scalar(2, 1, IpcTypeCode.Int).Reference(3, FlatObject.Table().Scalar(0, 4, 64).Scalar(1, 1, 1)).Reference(5, FlatObject.Tables([]));
        FlatObject schema = FlatObject.Table().Scalar(0, 2, 0).Reference(1, FlatObject.Tables([dictField, longField]));
        FlatObject dictionary = FlatObject.Table().Scalar(0, 8, 0).Reference(1, Batch(2, [(2, 0)], [(0, 0), (0, 16), (16, 8)])).Scalar(2, 1, 0);
        byte[] dictBody = new byte[24];
        BinaryPrimitives.WriteInt32LittleEndian(dictBody.AsSpan(4), 3);
        BinaryPrimitives.WriteInt32LittleEndian(dictBody.AsSpan(8), 6);
        "abcdef"u8.CopyTo(dictBody.AsSpan(16));
        byte[] body = new byte[48];
        for (int i = 0; i < 4; i++) { BinaryPrimitives.WriteInt32LittleEndian(body.AsSpan(4 * i), i % 2); BinaryPrimitives.WriteInt64LittleEndian(body.AsSpan(16 + (8 * i)), 100 + i); }
        byte[] bytes = StreamOf((Message(1, schema, 0), null), (Message(2, dictionary, 24), dictBody), (Message(3, Batch(4, [(4, 0), (4, 0)], [(0, 0), (0, 16), (16, 0), (16, 32)]), 48), body));
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream))
        {
            Assert.Equal(4, reader.RowCount);
            Assert.True(reader.Fields[0].IsDictionaryEncoded);
            Assert.Contains("ReadDictionaryColumn", Assert.Throws<ArgumentException>(() => reader.ReadColumn<int>("s").Dispose()).Message, StringComparison.Ordinal);
            Assert.Contains("ReadDictionaryColumn", Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("s").Dispose()).Message, StringComparison.Ordinal);
            using HugeArray<long> w = reader.ReadColumn<long>("w");
            Assert.Equal([100L, 101, 102, 103], w);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Attack_big_endian_half_bool_and_strings_with_nulls_in_odd_batches_read_back_exactly(ArrowIpcFormat format)
    {
        const int rows = 37;
        long live = AllocationLedger.LiveCount;
        var stream = new MemoryStream();
        using (var halves = new HugeArray<Half>(rows))
        using (var flags = new HugeArray<bool>(rows))
        using (var valid = new HugeArray<byte>(5))
        using (var builder = new NativeStringColumnBuilder())
        {
            for (int r = 0; r < rows; r++)
            {
                halves[r] = (Half)(r * -1.5f);
                flags[r] = r % 3 == 1;
                if (r % 5 != 2) valid[r >> 3] |= (byte)(1 << (r & 7));
                if (r % 4 == 3) builder.AppendNull(); else builder.Append(new string('x', r % 7) + r.ToString(CultureInfo.InvariantCulture));
            }

            using NativeStringColumn text = builder.Build();
            var writer = new ArrowIpcWriter { BatchSize = 8, BigEndian = true }.Add("h", halves, valid).Add("b", flags, valid).Add("t", text).Add("lt", text, largeOffsets: true);
            writer.Write(stream, format);
        }

        stream.Position = 0;
        using (var reader = new ArrowIpcReader(stream))
        {
            Assert.True(reader.IsBigEndian);
            using HugeArray<Half> h = reader.ReadColumn<Half>("h", AllocationOptions.Default, out HugeArray<byte> hv);
            using HugeArray<bool> b = reader.ReadColumn<bool>("b", AllocationOptions.Default, out HugeArray<byte> bv);
            using NativeStringColumn t = reader.ReadStringColumn("t");
            using NativeStringColumn lt = reader.ReadStringColumn("lt");
            using (hv)
            using (bv)
            {
                for (int r = 0; r < rows; r++)
                {
                    bool isValid = r % 5 != 2;
                    Assert.Equal(isValid, ((hv[r >> 3] >> (r & 7)) & 1) == 1);
                    Assert.Equal(isValid, ((bv[r >> 3] >> (r & 7)) & 1) == 1);
                    if (isValid) { Assert.Equal((Half)(r * -1.5f), h[r]); Assert.Equal(r % 3 == 1, b[r]); }
                    string? expected = r % 4 == 3 ? null : new string('x', r % 7) + r.ToString(CultureInfo.InvariantCulture);
                    Assert.Equal(expected, t.GetString(r));
                    Assert.Equal(expected, lt.GetString(r));
                }
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(13)]
    [InlineData(-64)]
    [InlineData(67108928)]
    public void Attack_an_Int_field_of_an_impossible_bit_width_is_invalid_data(int bitWidth)
    {
        FlatObject field = FlatObject.Table().Reference(0, FlatObject.String("v")).Scalar(1, 1, 0).Scalar(2, 1, IpcTypeCode.Int).Reference(3, FlatObject.Table().Scalar(0, 4, bitWidth).Scalar(1, 1, 1)).Reference(5, FlatObject.Tables([]));
        FlatObject schema = FlatObject.Table().Scalar(0, 2, 0).Reference(1, FlatObject.Tables([field]));
        byte[] bytes = StreamOf((Message(1, schema, 0), null), (Message(3, Batch(1, [(1, 0)], [(0, 0), (0, 8)]), 8), new byte[8]));
        Exception? e = Record.Exception(() =>
        {
            using var reader = new ArrowIpcReader(new MemoryStream(bytes), ArrowIpcFormat.Stream);
            reader.ReadColumn<long>("v").Dispose();
        });
        // Arrow's Int is 8, 16, 32 or 64 bits: any other width is a malformed schema, not an unsupported type.
        Assert.IsType<InvalidDataException>(e);
    }

    private sealed class LyingStream(byte[] data, long claimedLength) : Stream
    {
        private long _position;

        public bool OneByte { get; set; }

        public bool LengthThrows { get; set; }

        public int ThrowAfter { get; set; } = -1;

        public (ManualResetEventSlim Entered, ManualResetEventSlim Release)? Block { get; set; }

        public override bool CanRead => true;

        public override bool CanSeek => true;

        public override bool CanWrite => false;

        public override long Length => LengthThrows ? throw new NotSupportedException("no length") : claimedLength;

        public override long Position { get => _position; set => _position = value; }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            if (ThrowAfter == 0) throw new IOException("the disk went away");
            if (ThrowAfter > 0) ThrowAfter--;
            if (Block is { } block && buffer.Length > 1000) { block.Entered.Set(); block.Release.Wait(TimeSpan.FromSeconds(30)); }
            if (_position >= data.Length) return 0;
            int n = (int)Math.Min(buffer.Length, data.Length - _position);
            if (OneByte) n = Math.Min(n, 1);
            data.AsSpan((int)_position, n).CopyTo(buffer);
            _position += n;
            return n;
        }

        public override long Seek(long offset, SeekOrigin origin) => _position = origin switch { SeekOrigin.Begin => offset, SeekOrigin.Current => _position + offset, _ => claimedLength + offset };

        public override void Flush() { }

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
