using System.Buffers.Binary;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Forged and damaged IPC: each is an <see cref="InvalidDataException"/> saying what was wrong (or,
/// for a cut that happens to fall between messages of a stream, a shorter stream), never a read
/// outside the input or a crash, and the ledger ends where it began.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcMalformedInputTests
{
    // A row count no other integer of the input equals, so the tests can find it in the metadata.
    private const long Rows = 1234;

    [Fact]
    public void Every_truncation_of_a_file_is_invalid_data()
    {
        byte[] file = Write(ArrowIpcFormat.File);
        long live = AllocationLedger.LiveCount;
        for (int length = 0; length < file.Length; length += length < 64 ? 1 : 7)
        {
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => Open(file.AsSpan(0, length).ToArray(), ArrowIpcFormat.File).Dispose());
            Assert.False(string.IsNullOrEmpty(e.Message));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_stream_cut_inside_a_message_is_invalid_data_and_one_cut_between_messages_has_fewer_batches()
    {
        byte[] stream = Write(ArrowIpcFormat.Stream);
        long live = AllocationLedger.LiveCount;
        int cutBetween = 0;
        for (int length = 0; length < stream.Length; length++)
        {
            ArrowIpcReader reader;
            try
            {
                reader = Open(stream.AsSpan(0, length).ToArray(), ArrowIpcFormat.Stream);
            }
            catch (InvalidDataException)
            {
                continue;
            }

            using (reader)
            {
                // Only at a message boundary: the batches before the cut, read in full.
                cutBetween++;
                Assert.True(reader.RowCount <= Rows);
                if (reader.RowCount > 0)
                {
                    using HugeArray<long> values = reader.ReadColumn<long>("v");
                    Assert.Equal(Enumerable.Range(0, (int)reader.RowCount).Select(r => r * 3L), values);
                }
            }
        }

        Assert.Equal(2, cutBetween); // after the schema, after the batch
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Metadata_lengths_past_the_end_or_negative_are_invalid_data(ArrowIpcFormat format)
    {
        byte[] input = Write(format);
        int first = format == ArrowIpcFormat.File ? 8 : 0;
        long live = AllocationLedger.LiveCount;
        foreach (int length in new[] { input.Length, int.MaxValue, -5 })
        {
            byte[] forged = (byte[])input.Clone();
            BinaryPrimitives.WriteInt32LittleEndian(forged.AsSpan(first + 4), length);
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => ReadAll(forged, ArrowIpcFormat.Stream, streamPart: first));
            Assert.Contains("metadata", e.Message, StringComparison.Ordinal);
        }

        // The footer's own length.
        if (format == ArrowIpcFormat.File)
        {
            foreach (int length in new[] { input.Length, -1, 0 })
            {
                byte[] forged = (byte[])input.Clone();
                BinaryPrimitives.WriteInt32LittleEndian(forged.AsSpan(input.Length - 10), length);
                InvalidDataException e = Assert.Throws<InvalidDataException>(() => ReadAll(forged, format));
                Assert.Contains("footer", e.Message, StringComparison.Ordinal);
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Buffer_offsets_past_the_body_and_negative_buffer_lengths_are_invalid_data(ArrowIpcFormat format)
    {
        byte[] input = Write(format);
        long live = AllocationLedger.LiveCount;

        // The value buffer is (offset 0, length Rows * 8).
        int at = FindPair(input, 0, Rows * 8);
        foreach ((long offset, long length, string expected) in new[]
        {
            (1L << 40, Rows * 8, "body"),
            (Rows * 8, Rows * 8, "body"),
            (-8L, Rows * 8, "body"),
            (0L, -1L, "body"),
            (0L, long.MinValue, "body"),
        })
        {
            byte[] forged = (byte[])input.Clone();
            BinaryPrimitives.WriteInt64LittleEndian(forged.AsSpan(at), offset);
            BinaryPrimitives.WriteInt64LittleEndian(forged.AsSpan(at + 8), length);
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => ReadAll(forged, format));
            Assert.Contains(expected, e.Message, StringComparison.Ordinal);
            Assert.Contains("'v'", e.Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void A_batch_longer_than_its_buffers_is_invalid_data(ArrowIpcFormat format)
    {
        byte[] input = Write(format);
        long live = AllocationLedger.LiveCount;

        // Both the batch's length and its node's: the value buffer then holds too few bytes.
        byte[] forged = Replace(input, Rows, Rows * 4);
        InvalidDataException e = Assert.Throws<InvalidDataException>(() => ReadAll(forged, format));
        Assert.Contains("(39,488 needed)", e.Message, StringComparison.Ordinal);

        // The node alone: it disagrees with its batch.
        byte[] node = (byte[])input.Clone();
        BinaryPrimitives.WriteInt64LittleEndian(node.AsSpan(FindPair(input, Rows, 0)), Rows + 1);
        e = Assert.Throws<InvalidDataException>(() => ReadAll(node, format));
        Assert.Contains("node for column 'v'", e.Message, StringComparison.Ordinal);

        // A negative batch length.
        e = Assert.Throws<InvalidDataException>(() => ReadAll(Replace(input, Rows, -Rows), format));
        Assert.Contains("-1,234", e.Message, StringComparison.Ordinal);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Wrong_magic_is_invalid_data()
    {
        byte[] file = Write(ArrowIpcFormat.File);
        long live = AllocationLedger.LiveCount;
        byte[] start = (byte[])file.Clone();
        start[0] = (byte)'X';
        Assert.Contains("ARROW1", Assert.Throws<InvalidDataException>(() => ReadAll(start, ArrowIpcFormat.File)).Message, StringComparison.Ordinal);
        byte[] end = (byte[])file.Clone();
        end[^1] = (byte)'2';
        Assert.Contains("ARROW1", Assert.Throws<InvalidDataException>(() => ReadAll(end, ArrowIpcFormat.File)).Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => ReadAll(end, format: null));

        // Not IPC at all, read as a stream.
        Assert.Throws<InvalidDataException>(() => ReadAll("PAR1 is a Parquet file's magic"u8.ToArray(), format: null));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Random_damage_is_an_exception_of_the_documented_kinds_never_a_crash(ArrowIpcFormat format)
    {
        byte[] input = Write(format);
        var random = new Random(12345);
        long live = AllocationLedger.LiveCount;
        for (int i = 0; i < 3000; i++)
        {
            byte[] forged = (byte[])input.Clone();
            for (int flips = random.Next(1, 4); flips > 0; flips--)
            {
                // Mostly the metadata: the schema and batch messages at the start, the footer at the end.
                int span = Math.Min(640, forged.Length);
                int at = random.Next(4) switch { 0 => random.Next(forged.Length), 1 => forged.Length - 1 - random.Next(span), _ => random.Next(span) };
                forged[at] = (byte)random.Next(256);
            }

            try
            {
                ReadAll(forged, format);
            }
            catch (Exception e) when (e is InvalidDataException or NotSupportedException or InvalidOperationException or ArgumentException)
            {
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    private static byte[] Write(ArrowIpcFormat format)
    {
        using var values = new HugeArray<long>(Rows);
        using var flags = new HugeArray<bool>(Rows);
        using var valid = new HugeArray<byte>((Rows + 7) / 8);
        for (long r = 0; r < Rows; r++)
        {
            values[r] = r * 3;
            flags[r] = r % 3 == 0;
            if (r % 4 != 0)
            {
                valid[r >> 3] |= (byte)(1 << (int)(r & 7));
            }
        }

        var stream = new MemoryStream();
        new ArrowIpcWriter().Add("v", values).Add("f", flags, valid).Write(stream, format);
        return stream.ToArray();
    }

    private static ArrowIpcReader Open(byte[] bytes, ArrowIpcFormat? format) =>
        format is ArrowIpcFormat chosen ? new ArrowIpcReader(new MemoryStream(bytes), chosen) : new ArrowIpcReader(new MemoryStream(bytes));

    // Opens and reads every column; streamPart: the stream format's start inside a file (its header checked alone).
    private static void ReadAll(byte[] bytes, ArrowIpcFormat? format, int streamPart = 0)
    {
        using ArrowIpcReader reader = Open(streamPart == 0 ? bytes : bytes[streamPart..], format);
        using (HugeArray<long> values = reader.ReadColumn<long>("v", AllocationOptions.Default, out HugeArray<byte> validity))
        {
            validity.Dispose();
        }

        using (HugeArray<bool> flags = reader.ReadColumn<bool>("f", AllocationOptions.Default, out HugeArray<byte> validity))
        {
            validity.Dispose();
        }
    }

    private static int FindPair(byte[] bytes, long first, long second)
    {
        Span<byte> pattern = stackalloc byte[16];
        BinaryPrimitives.WriteInt64LittleEndian(pattern, first);
        BinaryPrimitives.WriteInt64LittleEndian(pattern[8..], second);
        int at = bytes.AsSpan().IndexOf(pattern);
        Assert.True(at >= 0, $"({first}, {second}) is not in the input.");
        return at;
    }

    private static byte[] Replace(byte[] bytes, long from, long to)
    {
        byte[] result = (byte[])bytes.Clone();
        Span<byte> pattern = stackalloc byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(pattern, from);
        int replaced = 0;
        for (int at = 0; at + 8 <= result.Length; at++)
        {
            if (result.AsSpan(at, 8).SequenceEqual(pattern))
            {
                BinaryPrimitives.WriteInt64LittleEndian(result.AsSpan(at), to);
                replaced++;
            }
        }

        Assert.True(replaced >= 2, $"{from} occurs {replaced} times.");
        return result;
    }
}
