using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using Apache.Arrow;
using Apache.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Utf8, Binary, LargeUtf8 and LargeBinary columns between Arrow IPC and <see cref="NativeStringColumn"/>:
/// Node's IPC read value by value, native columns written and read by Node and by Apache Arrow for
/// .NET, big-endian offsets, and forged offsets.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcStringTests : IDisposable
{
    private const string BatchLengths = "1,7,13,1000,2049,3";
    private const long Rows = 1 + 7 + 13 + 1000 + 2049 + 3;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-strings-" + Guid.NewGuid().ToString("N"));

    public IpcStringTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    // The same formula as arrow-check.js's stringValue.
    private static string Value(long r) => r % 9 == 0 ? string.Empty : "v" + r.ToString(CultureInfo.InvariantCulture) + (r % 5 == 0 ? "-\u00e9\u4e2d\U0001F600" : string.Empty);

    private static bool TextIsNull(long r) => r % 6 == 1;

    private static bool BytesIsNull(long r) => r % 4 == 3;

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public void String_and_binary_IPC_Node_wrote_reads_into_native_string_columns_value_by_value(string format)
    {
        string path = Path.Combine(_folder, $"strings.{format}.arrow");
        NodeArrow.Run("write-strings", path, format, BatchLengths);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(path))
        {
            Assert.Equal([ArrowIpcType.Utf8, ArrowIpcType.Binary, ArrowIpcType.LargeUtf8, ArrowIpcType.LargeBinary], reader.Fields.Select(f => f.Type));
            foreach ((string name, bool utf8, Func<long, bool> isNull) in new (string, bool, Func<long, bool>)[]
            {
                ("s", true, TextIsNull), ("bin", false, BytesIsNull), ("ls", true, TextIsNull), ("lbin", false, BytesIsNull),
            })
            {
                using NativeStringColumn column = reader.ReadStringColumn(name);
                Assert.Equal(Rows, column.Length);
                Assert.Equal(utf8, column.IsUtf8);
                for (long r = 0; r < Rows; r++)
                {
                    if (isNull(r) != column.IsNull(r) || (!isNull(r) && !column.ValueEquals(r, Encoding.UTF8.GetBytes(Value(r)))))
                    {
                        Assert.Fail($"Column {name}, row {r}: '{column.GetString(r)}', expected '{(isNull(r) ? "null" : Value(r))}'.");
                    }
                }
            }

            ArgumentException wrongRead = Assert.Throws<ArgumentException>(() => reader.ReadColumn<byte>("s"));
            Assert.Equal("column", wrongRead.ParamName);
            Assert.Contains("which ReadColumn<Byte> does not read: read it with ReadStringColumn", wrongRead.Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData("file", false, 1L << 20)]
    [InlineData("stream", true, 1L << 20)]
    [InlineData("file", true, 1000)]
    [InlineData("stream", false, 8)]
    public void Node_and_Apache_Arrow_for_NET_read_string_columns_written_from_native_memory(string format, bool largeOffsets, long batchSize)
    {
        using NativeStringColumn text = Build(utf8: true, TextIsNull);
        using NativeStringColumn bytes = Build(utf8: false, BytesIsNull);
        string path = Path.Combine(_folder, $"native-strings.{format}.{largeOffsets}.{batchSize}.arrow");
        long live = AllocationLedger.LiveCount;
        new ArrowIpcWriter { BatchSize = batchSize }
            .Add("s", text, largeOffsets)
            .Add("bin", bytes, largeOffsets)
            .Write(path, format == "file" ? ArrowIpcFormat.File : ArrowIpcFormat.Stream);
        Assert.Equal(live, AllocationLedger.LiveCount);

        Dictionary<string, NodeArrow.ColumnSummary> node = NodeArrow.Read(path);
        Assert.Equal(new NodeArrow.ColumnSummary(largeOffsets ? "LargeUtf8" : "Utf8", Rows, text.NullCount, Checksum(TextIsNull)), node["s"]);
        Assert.Equal(new NodeArrow.ColumnSummary(largeOffsets ? "LargeBinary" : "Binary", Rows, bytes.NullCount, Checksum(BytesIsNull)), node["bin"]);

        using (FileStream stream = File.OpenRead(path))
        using (ArrowStreamReader other = format == "file" ? new ArrowFileReader(stream) : new ArrowStreamReader(stream))
        {
            long row = 0;
            while (other.ReadNextRecordBatch() is RecordBatch batch)
            {
                using (batch)
                {
                    IArrowArray s = batch.Column("s");
                    IArrowArray bin = batch.Column("bin");
                    for (int i = 0; i < batch.Length; i++, row++)
                    {
                        string? expected = TextIsNull(row) ? null : Value(row);
                        string? actual = s is StringArray small ? small.GetString(i) : ((LargeStringArray)s).GetString(i);
                        Assert.Equal(expected, actual);
                        Assert.Equal(BytesIsNull(row), bin.IsNull(i));
                    }
                }
            }

            Assert.Equal(Rows, row);
        }

        using var reader = new ArrowIpcReader(path);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        for (long r = 0; r < Rows; r++)
        {
            Assert.Equal(text.GetString(r), back.GetString(r));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Big_endian_string_offsets_read_as_the_same_strings(bool largeOffsets)
    {
        using NativeStringColumn text = Build(utf8: true, TextIsNull);
        var stream = new MemoryStream();
        new ArrowIpcWriter { BatchSize = 512, BigEndian = true }.Add("s", text, largeOffsets).Write(stream, ArrowIpcFormat.Stream);
        stream.Position = 0;
        using var reader = new ArrowIpcReader(stream);
        Assert.True(reader.IsBigEndian);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        Assert.Equal(text.NullCount, back.NullCount);
        for (long r = 0; r < Rows; r++)
        {
            Assert.Equal(text.GetString(r), back.GetString(r));
        }
    }

    [Fact]
    public void Offsets_that_do_not_ascend_or_leave_the_data_buffer_are_invalid_data()
    {
        using var builder = new NativeStringColumnBuilder();
        for (int i = 0; i < 100; i++)
        {
            builder.Append("value " + i.ToString(CultureInfo.InvariantCulture));
        }

        using NativeStringColumn column = builder.Build();
        var stream = new MemoryStream();
        new ArrowIpcWriter().Add("s", column, largeOffsets: true).Write(stream, ArrowIpcFormat.File);
        byte[] input = stream.ToArray();
        long live = AllocationLedger.LiveCount;

        // Row 50's offset (the body's offsets start with 0, 7, 14, ...): moved before row 49's, then past the data.
        Span<byte> pattern = stackalloc byte[16];
        BinaryPrimitives.WriteInt64LittleEndian(pattern, column.Offsets[50]);
        BinaryPrimitives.WriteInt64LittleEndian(pattern[8..], column.Offsets[51]);
        int at = input.AsSpan().IndexOf(pattern);
        Assert.True(at > 0);
        foreach (long forgedOffset in new[] { 3L, 1L << 40, -1 })
        {
            byte[] forged = (byte[])input.Clone();
            BinaryPrimitives.WriteInt64LittleEndian(forged.AsSpan(at), forgedOffset);
            using var reader = new ArrowIpcReader(new MemoryStream(forged));
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadStringColumn("s"));
            Assert.Contains("'s'", e.Message, StringComparison.Ordinal);
        }

        // The last offset past the data buffer.
        byte[] past = (byte[])input.Clone();
        int lastAt = at + ((100 - 50) * sizeof(long));
        Assert.Equal(column.Offsets[100], BinaryPrimitives.ReadInt64LittleEndian(input.AsSpan(lastAt)));
        BinaryPrimitives.WriteInt64LittleEndian(past.AsSpan(lastAt), 1L << 20);
        using (var reader = new ArrowIpcReader(new MemoryStream(past)))
        {
            Assert.Contains("data buffer", Assert.Throws<InvalidDataException>(() => reader.ReadStringColumn("s")).Message, StringComparison.Ordinal);
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Offsets_changed_after_the_column_was_made_are_refused_by_the_writer_before_a_read_outside_the_data()
    {
        using NativeStringColumn text = Build(utf8: true, TextIsNull);
        long saved = text.Offsets[Rows];
        text.Offsets[Rows] = text.Data.Length + 4096;
        var writer = new ArrowIpcWriter().Add("s", text);
        Assert.Contains("'s'", Assert.Throws<InvalidDataException>(() => writer.Write(new MemoryStream())).Message, StringComparison.Ordinal);
        text.Offsets[Rows] = saved;

        long middle = text.Offsets[Rows / 2];
        text.Offsets[Rows / 2] = text.Offsets[(Rows / 2) + 2];
        text.Offsets[(Rows / 2) + 1] = middle;
        Assert.Contains("do not ascend", Assert.Throws<InvalidDataException>(() => writer.Write(new MemoryStream())).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_string_column_of_no_rows_is_written_as_a_schema_alone_and_read_back_empty()
    {
        using var builder = new NativeStringColumnBuilder();
        using NativeStringColumn empty = builder.Build();
        var stream = new MemoryStream();
        new ArrowIpcWriter().Add("s", empty).Write(stream, ArrowIpcFormat.File);
        stream.Position = 0;
        using var reader = new ArrowIpcReader(stream);
        Assert.Equal(0, reader.BatchCount);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        Assert.Equal(0, back.Length);
        Assert.Equal(1, back.Offsets.Length);
    }

    private static NativeStringColumn Build(bool utf8, Func<long, bool> isNull)
    {
        using var builder = new NativeStringColumnBuilder(utf8);
        for (long r = 0; r < Rows; r++)
        {
            if (isNull(r))
            {
                builder.AppendNull();
            }
            else
            {
                builder.Append(Encoding.UTF8.GetBytes(Value(r)));
            }
        }

        return builder.Build();
    }

    private static string Checksum(Func<long, bool> isNull)
    {
        long sum = 0;
        for (long r = 0; r < Rows; r++)
        {
            if (!isNull(r))
            {
                foreach (byte b in Encoding.UTF8.GetBytes(Value(r)))
                {
                    sum += b * ((r % 13) + 1);
                }
            }
        }

        return sum.ToString(CultureInfo.InvariantCulture);
    }
}
