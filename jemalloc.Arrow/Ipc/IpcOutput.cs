using System.Buffers.Binary;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// The stream an IPC writer writes to, and its position counted here (the stream need not seek):
/// encapsulated messages, native buffers written from their blocks through spans, and the zero
/// padding that keeps every message and buffer on an 8-byte boundary.
/// </summary>
internal sealed unsafe class IpcOutput(Stream stream)
{
    private static readonly byte[] Zeros = new byte[8];

    internal long Position { get; private set; }

    internal void Write(ReadOnlySpan<byte> bytes)
    {
        stream.Write(bytes);
        Position += bytes.Length;
    }

    internal void WriteInt32(int value)
    {
        Span<byte> bytes = stackalloc byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, value);
        Write(bytes);
    }

    /// <summary>Writes <paramref name="count"/> bytes from native memory, in spans of at most 1 GiB.</summary>
    internal void WriteNative(byte* source, long count)
    {
        while (count > 0)
        {
            int chunk = (int)Math.Min(count, 1 << 30);
            Write(new ReadOnlySpan<byte>(source, chunk));
            source += chunk;
            count -= chunk;
        }
    }

    /// <summary>Zeros up to the next multiple of 8 bytes.</summary>
    internal void Pad() => Write(Zeros.AsSpan(0, (int)(-Position & 7)));

    /// <summary>
    /// An encapsulated message: the continuation marker, the metadata's length (padded to 8 bytes), the
    /// Message flatbuffer. Returns where it starts and the length a file's footer records for it.
    /// </summary>
    internal (long Offset, int MetadataLength) WriteMessage(FlatObject message)
    {
        byte[] metadata = FlatBufferBuilder.Build(message);
        long offset = Position;
        WriteInt32(-1);
        WriteInt32(metadata.Length);
        Write(metadata);
        return (offset, 8 + metadata.Length);
    }

    /// <summary>The end-of-stream marker: the continuation marker and a length of 0.</summary>
    internal void WriteEndOfStream()
    {
        WriteInt32(-1);
        WriteInt32(0);
    }
}
