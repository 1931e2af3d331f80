namespace jemalloc.Arrow;

/// <summary>The two forms of Arrow IPC.</summary>
public enum ArrowIpcFormat
{
    /// <summary>The file format: the <c>ARROW1</c> magic, the stream, a footer that locates every batch, and the magic again (<c>.arrow</c>, <c>.feather</c> version 2).</summary>
    File,

    /// <summary>The streaming format: a schema message, then dictionary and record batch messages, read front to back.</summary>
    Stream,
}
