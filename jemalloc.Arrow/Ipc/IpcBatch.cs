namespace jemalloc.Arrow.Ipc;

/// <summary>
/// One record batch as its metadata describes it: its rows, its field nodes (length and null count,
/// pre-order), its buffers (offset and length in the body), the variadic buffer counts of its view
/// columns, where its body lies in the stream, and its compression codec if it has one.
/// </summary>
internal sealed class IpcBatch
{
    internal required int Index { get; init; }

    internal required long Length { get; init; }

    /// <summary>Node <c>n</c>'s length at <c>2n</c> and its null count at <c>2n + 1</c>.</summary>
    internal required long[] Nodes { get; init; }

    /// <summary>Buffer <c>b</c>'s offset in the body at <c>2b</c> and its length at <c>2b + 1</c>.</summary>
    internal required long[] Buffers { get; init; }

    internal required long[] VariadicCounts { get; init; }

    /// <summary>The body's first byte, from the start of the stream.</summary>
    internal required long BodyStart { get; init; }

    internal required long BodyLength { get; init; }

    /// <summary>The codec its buffers are compressed with (LZ4_FRAME, ZSTD), or <see langword="null"/>.</summary>
    internal string? Codec { get; init; }

    internal int NodeCount => Nodes.Length / 2;

    internal int BufferCount => Buffers.Length / 2;
}
