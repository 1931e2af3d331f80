using System.Buffers.Binary;
using System.Text;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Builds an Arrow IPC stream of one dictionary-encoded Utf8 column ("d") message by message, in either
/// byte order, so the tests can give it what the writers they have never write: deltas, replacements,
/// dictionaries in the wrong place, indices of every integer type, out of range or under null rows.
/// </summary>
internal sealed class IpcDictionaryStream(int indexBits, bool indexSigned, bool bigEndian, long dictionaryId = 7)
{
    private const short MetadataVersionV5 = 4;
    private readonly List<byte> _bytes = [];
    private bool _schemaWritten;

    /// <summary>A dictionary batch of <paramref name="values"/> (a null entry is a null value).</summary>
    internal IpcDictionaryStream Dictionary(bool isDelta, params string?[] values) => Dictionary(dictionaryId, isDelta, values);

    internal IpcDictionaryStream Dictionary(long id, bool isDelta, params string?[] values)
    {
        Schema();
        byte[] data = Encoding.UTF8.GetBytes(string.Concat(values));
        byte[] offsets = new byte[4 * (values.Length + 1)];
        int at = 0;
        for (int i = 0; i < values.Length; i++)
        {
            at += Encoding.UTF8.GetByteCount(values[i] ?? string.Empty);
            WriteInt(offsets.AsSpan(4 * (i + 1)), at, 4);
        }

        bool[] valid = [.. values.Select(v => v is not null)];
        byte[] batchBody = Body([Bitmap(valid), offsets, data], out byte[] buffers);
        FlatObject batch = RecordBatch(values.Length, valid.Count(v => !v), buffers, 3);
        FlatObject dictionary = FlatObject.Table().Scalar(0, 8, id).Reference(1, batch).Scalar(2, 1, isDelta ? 1 : 0);
        Message(2, dictionary, batchBody);
        return this;
    }

    /// <summary>A record batch whose rows name <paramref name="indices"/> (a null entry is a null row, its index <paramref name="nullIndex"/>).</summary>
    internal IpcDictionaryStream Batch(long?[] indices, long nullIndex = 0)
    {
        Schema();
        int width = indexBits / 8;
        byte[] values = new byte[width * indices.Length];
        for (int i = 0; i < indices.Length; i++)
        {
            WriteInt(values.AsSpan(width * i), indices[i] ?? nullIndex, width);
        }

        bool[] valid = [.. indices.Select(v => v is not null)];
        byte[] body = Body([Bitmap(valid), values], out byte[] buffers);
        Message(3, RecordBatch(indices.Length, valid.Count(v => !v), buffers, 2), body);
        return this;
    }

    /// <summary>The stream so far, closed by the end-of-stream marker.</summary>
    internal MemoryStream ToStream()
    {
        Schema();
        return new MemoryStream([.. _bytes, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]);
    }

    // Schema: endianness (0), fields (1). Field: name (0), nullable (1), type_type (2), type (3),
    // dictionary (4: id (0), indexType (1: bitWidth (0), is_signed (1))), children (5).
    private void Schema()
    {
        if (_schemaWritten)
        {
            return;
        }

        _schemaWritten = true;
        FlatObject encoding = FlatObject.Table()
            .Scalar(0, 8, dictionaryId)
            .Reference(1, FlatObject.Table().Scalar(0, 4, indexBits).Scalar(1, 1, indexSigned ? 1 : 0));
        FlatObject field = FlatObject.Table()
            .Reference(0, FlatObject.String("d"))
            .Scalar(1, 1, 1)
            .Scalar(2, 1, IpcTypeCode.Utf8)
            .Reference(3, FlatObject.Table())
            .Reference(4, encoding)
            .Reference(5, FlatObject.Tables([]));
        FlatObject schema = FlatObject.Table().Scalar(0, 2, bigEndian ? 1 : 0).Reference(1, FlatObject.Tables([field]));
        Message(1, schema, []);
    }

    // RecordBatch: length (0), nodes (1: length, null count), buffers (2: offset, length).
    private static FlatObject RecordBatch(long rows, long nulls, byte[] buffers, int bufferCount)
    {
        byte[] node = new byte[16];
        BinaryPrimitives.WriteInt64LittleEndian(node, rows);
        BinaryPrimitives.WriteInt64LittleEndian(node.AsSpan(8), nulls);
        return FlatObject.Table()
            .Scalar(0, 8, rows)
            .Reference(1, FlatObject.Structs(node, 1, 8))
            .Reference(2, FlatObject.Structs(buffers, bufferCount, 8));
    }

    // The buffers one after another, each on an 8-byte boundary; their (offset, length) pairs.
    private static byte[] Body(byte[][] parts, out byte[] buffers)
    {
        buffers = new byte[16 * parts.Length];
        var body = new MemoryStream();
        for (int i = 0; i < parts.Length; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(buffers.AsSpan(16 * i), body.Length);
            BinaryPrimitives.WriteInt64LittleEndian(buffers.AsSpan((16 * i) + 8), parts[i].Length);
            body.Write(parts[i]);
            body.Write(new byte[(int)(-body.Length & 7)]);
        }

        return body.ToArray();
    }

    // The validity bitmap, or no buffer when every row is valid.
    private static byte[] Bitmap(bool[] valid)
    {
        if (valid.All(v => v))
        {
            return [];
        }

        byte[] bits = new byte[(valid.Length + 7) / 8];
        for (int i = 0; i < valid.Length; i++)
        {
            bits[i / 8] |= (byte)(valid[i] ? 1 << (i % 8) : 0);
        }

        return bits;
    }

    private void Message(byte headerType, FlatObject header, byte[] body)
    {
        FlatObject message = FlatObject.Table()
            .Scalar(0, 2, MetadataVersionV5)
            .Scalar(1, 1, headerType)
            .Reference(2, header)
            .Scalar(3, 8, body.Length);
        byte[] metadata = FlatBufferBuilder.Build(message);
        Span<byte> prefix = stackalloc byte[8];
        BinaryPrimitives.WriteInt32LittleEndian(prefix, -1);
        BinaryPrimitives.WriteInt32LittleEndian(prefix[4..], metadata.Length);
        _bytes.AddRange(prefix);
        _bytes.AddRange(metadata);
        _bytes.AddRange(body);
    }

    // An integer of `width` bytes in the stream's byte order.
    private void WriteInt(Span<byte> target, long value, int width)
    {
        for (int i = 0; i < width; i++)
        {
            target[bigEndian ? width - 1 - i : i] = (byte)(value >> (8 * i));
        }
    }
}
