using System.Buffers.Binary;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// What an IPC file or stream holds, read once when a reader opens it: the schema, its byte order,
/// and every record batch's metadata and body position. Every length and offset is checked against
/// the stream's length before it is used, so a forged or truncated input is an
/// <see cref="InvalidDataException"/> here or when a column's buffers are located, never a read past
/// the end. Bodies are not read here.
/// </summary>
internal sealed class IpcIndex
{
    // Message: version (0), header_type (1), header (2), bodyLength (3). MessageHeader tags.
    private const byte SchemaHeader = 1;
    private const byte DictionaryBatchHeader = 2;
    private const byte RecordBatchHeader = 3;
    private const int MaxMetadata = 256 << 20;
    private static readonly byte[] Magic = "ARROW1"u8.ToArray();

    private readonly Stream _stream;
    private readonly long _streamLength;

    private IpcIndex(Stream stream)
    {
        _stream = stream;
        _streamLength = stream.Length;
    }

    internal ArrowIpcField[] Fields { get; private set; } = [];

    internal bool BigEndian { get; private set; }

    internal List<IpcBatch> Batches { get; } = [];

    /// <summary>The dictionary batches, in the order the input gives them.</summary>
    internal List<IpcDictionaryBatch> Dictionaries { get; } = [];

    /// <summary>The rows of every batch together.</summary>
    internal long RowCount { get; private set; }

    internal ArrowIpcFormat Format { get; private set; }

    /// <summary>Whether the stream starts with the file format's magic.</summary>
    internal static bool StartsWithMagic(Stream stream)
    {
        Span<byte> start = stackalloc byte[6];
        stream.Position = 0;
        return stream.ReadAtLeast(start, 6, throwOnEndOfStream: false) == 6 && start.SequenceEqual(Magic);
    }

    /// <summary>Reads the schema and batch metadata of <paramref name="stream"/> (seekable) in <paramref name="format"/>.</summary>
    /// <exception cref="InvalidDataException">The input is not Arrow IPC of that format, or is malformed or truncated.</exception>
    internal static IpcIndex Read(Stream stream, ArrowIpcFormat format)
    {
        var index = new IpcIndex(stream) { Format = format };
        try
        {
            if (format == ArrowIpcFormat.File)
            {
                index.ReadFile();
            }
            else
            {
                index.ReadStream();
            }
        }
        catch (EndOfStreamException e)
        {
            throw new InvalidDataException($"The Arrow IPC {format.ToString().ToLowerInvariant()} ends early ({stream.Length:N0} bytes).", e);
        }

        return index;
    }

    private void ReadStream()
    {
        long position = 0;
        bool schemaSeen = false;
        int messageNumber = 0;
        while (position < _streamLength)
        {
            Message? read = ReadMessage(position, $"message {messageNumber}");
            if (read is not Message message)
            {
                break;
            }

            if (!schemaSeen)
            {
                if (message.HeaderType != SchemaHeader)
                {
                    IpcThrow.InvalidData($"The Arrow IPC stream starts with a message of type {message.HeaderType}, not a schema.");
                }

                (Fields, BigEndian) = IpcSchema.Read(message.Header);
                schemaSeen = true;
            }
            else if (message.HeaderType == RecordBatchHeader)
            {
                AddBatch(ReadBatch(message, Batches.Count));
            }
            else if (message.HeaderType == DictionaryBatchHeader)
            {
                Dictionaries.Add(ReadDictionaryBatch(message, Dictionaries.Count, Batches.Count));
            }
            else if (message.HeaderType == SchemaHeader)
            {
                IpcThrow.InvalidData($"Message {messageNumber} of the Arrow IPC stream is a second schema.");
            }

            // Tensors and other messages are passed over.
            position = message.BodyStart + message.BodyLength;
            messageNumber++;
        }

        if (!schemaSeen)
        {
            IpcThrow.InvalidData($"The input ({_streamLength:N0} bytes) holds no Arrow IPC schema message.");
        }
    }

    // ARROW1, padding, the stream, the footer, its int32 length, ARROW1.
    private void ReadFile()
    {
        Span<byte> tail = stackalloc byte[10];
        if (_streamLength < 8 + 10 || !StartsWithMagic(_stream))
        {
            IpcThrow.InvalidData($"The input ({_streamLength:N0} bytes) is not an Arrow IPC file: it does not start with the ARROW1 magic.");
        }

        _stream.Position = _streamLength - 10;
        _stream.ReadExactly(tail);
        if (!tail[4..].SequenceEqual(Magic))
        {
            IpcThrow.InvalidData($"The Arrow IPC file ({_streamLength:N0} bytes) does not end with the ARROW1 magic: it is truncated or not a file.");
        }

        int footerLength = BinaryPrimitives.ReadInt32LittleEndian(tail);
        long footerStart = _streamLength - 10 - (long)footerLength;
        if (footerLength <= 0 || footerStart < 8)
        {
            IpcThrow.InvalidData($"The Arrow IPC file declares a footer of {footerLength:N0} bytes, which does not fit its {_streamLength:N0} bytes.");
        }

        byte[] footerBytes = new byte[footerLength];
        _stream.Position = footerStart;
        _stream.ReadExactly(footerBytes);
        FlatTable footer = new FlatBuffer(footerBytes, footerLength, "The file's footer").Root("the footer's root");
        FlatTable schema = footer.GetTable(1, "the footer's schema") ?? throw new InvalidDataException("The Arrow IPC file's footer has no schema.");
        (Fields, BigEndian) = IpcSchema.Read(schema);

        // The footer's dictionaries (2) and record batches (3): vectors of Blocks. A file's dictionaries
        // all precede its record batches (the format allows no replacement in a file, only deltas).
        FlatVector dictionaries = footer.GetVector(2, 24, "the footer's dictionaries");
        FlatVector batches = footer.GetVector(3, 24, "the footer's record batches");
        var blocks = new Block[dictionaries.Count + batches.Count];
        for (int d = 0; d < dictionaries.Count; d++)
        {
            blocks[d] = ReadBlock(dictionaries, d, dictionary: true, footerStart);
        }

        for (int b = 0; b < batches.Count; b++)
        {
            blocks[dictionaries.Count + b] = ReadBlock(batches, b, dictionary: false, footerStart);
        }

        CheckDisjoint(blocks);
        for (int d = 0; d < dictionaries.Count; d++)
        {
            Dictionaries.Add(ReadDictionaryBatch(MessageAt(blocks[d], DictionaryBatchHeader), d, 0));
        }

        for (int b = 0; b < batches.Count; b++)
        {
            AddBatch(ReadBatch(MessageAt(blocks[dictionaries.Count + b], RecordBatchHeader), b));
        }
    }

    // Block: offset (int64), metaDataLength (int32, padded), bodyLength (int64): 24 bytes, checked to
    // lie between the magic and the footer. Its name is made only for a message: a footer may list millions.
    private static Block ReadBlock(FlatVector blocks, int b, bool dictionary, long footerStart)
    {
        const string Field = "a block of the footer";
        long offset = blocks.Int64At(b, 0, Field);
        int metadataLength = blocks.Int32At(b, 8, Field);
        long bodyLength = blocks.Int64At(b, 16, Field);
        var block = new Block(dictionary, b, offset, metadataLength, bodyLength);
        if (offset < 8 || offset >= footerStart || metadataLength <= 0 || bodyLength < 0 || offset + metadataLength + bodyLength > footerStart)
        {
            IpcThrow.InvalidData($"The footer places {block.What} at byte {offset:N0} ({metadataLength:N0} bytes of metadata, {bodyLength:N0} of body), outside the file's {footerStart:N0} bytes before its footer.");
        }

        return block;
    }

    // Each block's message and body are bytes of the file no other block lists, so that what the
    // batches add up to (rows, bytes to allocate) is at most what the file holds: a footer that lists
    // one batch many times would otherwise make a small file read as a huge one.
    private static void CheckDisjoint(Block[] blocks)
    {
        // By offset, then by place in the footer, so that a block listed twice is named by its first two listings.
        int[] order = [.. Enumerable.Range(0, blocks.Length)];
        Array.Sort(order, (x, y) => blocks[x].Offset != blocks[y].Offset ? blocks[x].Offset.CompareTo(blocks[y].Offset) : x.CompareTo(y));
        for (int i = 1; i < order.Length; i++)
        {
            Block before = blocks[order[i - 1]];
            Block after = blocks[order[i]];
            if (after.Offset < before.End)
            {
                IpcThrow.InvalidData($"The footer lists {before.What} at bytes {before.Offset:N0} to {before.End - 1:N0} and {after.What} at bytes {after.Offset:N0} to {after.End - 1:N0}, which overlap: a file's blocks each hold bytes of their own.");
            }
        }
    }

    // The message a block points at, checked to be of the header type expected and to have the body the block says.
    private Message MessageAt(Block block, byte headerType)
    {
        (string what, long offset, int metadataLength, long bodyLength) = (block.What, block.Offset, block.MetadataLength, block.BodyLength);
        Message message = ReadMessage(offset, what) ?? throw new InvalidDataException($"The footer points {what} at byte {offset:N0}, where the stream ends.");
        if (message.HeaderType != headerType || message.BodyStart != offset + metadataLength || message.BodyLength != bodyLength)
        {
            IpcThrow.InvalidData($"The footer describes {what} (at byte {offset:N0}, body of {bodyLength:N0} bytes from byte {offset + metadataLength:N0}), but the message there is of type {message.HeaderType} with a body of {message.BodyLength:N0} bytes from byte {message.BodyStart:N0}.");
        }

        return message;
    }

    // DictionaryBatch: id (0), data (1: a RecordBatch of one column), isDelta (2).
    private static IpcDictionaryBatch ReadDictionaryBatch(Message message, int index, int recordBatchesBefore)
    {
        string what = $"dictionary batch {index}";
        long id = message.Header.GetInt64(0, 0, what + "'s id");
        FlatTable data = message.Header.GetTable(1, what + "'s data") ?? throw new InvalidDataException($"Dictionary batch {index} (id {id}) has no record batch.");
        bool delta = message.Header.GetBool(2, false, what + "'s delta flag");
        return new IpcDictionaryBatch(id, ReadBatch(message with { Header = data }, index), delta, recordBatchesBefore);
    }

    /// <summary>
    /// An index of one dictionary's batches, read as the record batches of a schema of one column
    /// (<paramref name="field"/>), so that a column read reads them as it reads any column.
    /// </summary>
    internal IpcIndex OfDictionary(ArrowIpcField field, IEnumerable<IpcBatch> batches)
    {
        var index = new IpcIndex(_stream) { Format = Format, BigEndian = BigEndian, Fields = [field] };
        foreach (IpcBatch batch in batches)
        {
            index.AddBatch(batch);
        }

        return index;
    }

    // Keeps the batches' total row count, which a forged input cannot make pass long.MaxValue.
    private void AddBatch(IpcBatch batch)
    {
        if (batch.Length > long.MaxValue - RowCount)
        {
            IpcThrow.InvalidData($"Record batch {batch.Index} declares {batch.Length:N0} rows after {RowCount:N0}: together more rows than any input holds.");
        }

        Batches.Add(batch);
        RowCount += batch.Length;
    }

    // One encapsulated message at position: 0xFFFFFFFF and an int32 metadata length (or, in the
    // format before 0.15, the length alone), the Message flatbuffer, then its body. Null at the
    // end-of-stream marker (a length of 0).
    private Message? ReadMessage(long position, string what)
    {
        Span<byte> prefix = stackalloc byte[8];
        if (_streamLength - position < 4)
        {
            IpcThrow.InvalidData($"The Arrow IPC input ends inside {what} at byte {position:N0}.");
        }

        _stream.Position = position;
        _stream.ReadExactly(prefix[..4]);
        int length = BinaryPrimitives.ReadInt32LittleEndian(prefix);
        long metadataStart = position + 4;
        if (length == -1)
        {
            if (_streamLength - position < 8)
            {
                IpcThrow.InvalidData($"The Arrow IPC input ends inside {what} at byte {position:N0}, after its continuation marker.");
            }

            _stream.ReadExactly(prefix.Slice(4, 4));
            length = BinaryPrimitives.ReadInt32LittleEndian(prefix[4..]);
            metadataStart += 4;
        }

        if (length == 0)
        {
            return null;
        }

        if (length < 0 || length > MaxMetadata || length > _streamLength - metadataStart)
        {
            IpcThrow.InvalidData($"{Capitalized(what)} at byte {position:N0} declares {length:N0} bytes of metadata; {_streamLength - metadataStart:N0} bytes follow.");
        }

        byte[] metadata = new byte[length];
        _stream.ReadExactly(metadata);
        var buffer = new FlatBuffer(metadata, length, $"The metadata of {what}");
        FlatTable table = buffer.Root("the Message's root");
        byte headerType = table.GetUInt8(1, 0, "the Message's header type");
        FlatTable header = table.GetTable(2, "the Message's header") ?? throw new InvalidDataException($"{Capitalized(what)} at byte {position:N0} has no header.");
        long bodyLength = table.GetInt64(3, 0, "the Message's body length");
        long bodyStart = metadataStart + length;
        if (bodyLength < 0 || bodyLength > _streamLength - bodyStart)
        {
            IpcThrow.InvalidData($"{Capitalized(what)} at byte {position:N0} declares a body of {bodyLength:N0} bytes; {_streamLength - bodyStart:N0} bytes follow its metadata.");
        }

        return new Message(headerType, header, bodyStart, bodyLength);
    }

    // RecordBatch: length (0), nodes (1), buffers (2), compression (3: codec (0)), variadicBufferCounts (4).
    private static IpcBatch ReadBatch(Message message, int index)
    {
        FlatTable batch = message.Header;
        string what = $"record batch {index}";
        long length = batch.GetInt64(0, 0, what + "'s length");
        FlatVector nodes = batch.GetVector(1, 16, what + "'s nodes");
        FlatVector buffers = batch.GetVector(2, 16, what + "'s buffers");
        FlatVector variadic = batch.GetVector(4, 8, what + "'s variadic buffer counts");
        string? codec = null;
        if (batch.GetTable(3, what + "'s compression") is FlatTable compression)
        {
            sbyte code = (sbyte)compression.GetUInt8(0, 0, what + "'s codec");
            codec = code switch { 0 => "LZ4_FRAME", 1 => "ZSTD", _ => $"codec {code}" };
        }

        if (length < 0)
        {
            IpcThrow.InvalidData($"Record batch {index} declares {length:N0} rows.");
        }

        var result = new IpcBatch
        {
            Index = index,
            Length = length,
            Nodes = ReadPairs(nodes, what + "'s nodes"),
            Buffers = ReadPairs(buffers, what + "'s buffers"),
            VariadicCounts = new long[variadic.Count],
            BodyStart = message.BodyStart,
            BodyLength = message.BodyLength,
            Codec = codec,
        };
        for (int i = 0; i < variadic.Count; i++)
        {
            result.VariadicCounts[i] = variadic.Int64At(i, 0, what + "'s variadic buffer counts");
        }

        return result;
    }

    private static long[] ReadPairs(FlatVector vector, string what)
    {
        long[] pairs = new long[vector.Count * 2];
        for (int i = 0; i < vector.Count; i++)
        {
            pairs[2 * i] = vector.Int64At(i, 0, what);
            pairs[(2 * i) + 1] = vector.Int64At(i, 8, what);
        }

        return pairs;
    }

    private static string Capitalized(string text) => char.ToUpperInvariant(text[0]) + text[1..];

    private readonly record struct Message(byte HeaderType, FlatTable Header, long BodyStart, long BodyLength);

    // A footer's Block, named for messages: its message's metadata and body span Offset to End.
    private readonly record struct Block(bool Dictionary, int Index, long Offset, int MetadataLength, long BodyLength)
    {
        internal string What => $"{(Dictionary ? "dictionary" : "record")} batch {Index} of the file";

        internal long End => Offset + MetadataLength + BodyLength;
    }
}
