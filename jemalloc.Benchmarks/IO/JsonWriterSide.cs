namespace jemalloc.Benchmarks.IO;

/// <summary>The <see cref="System.Buffers.IBufferWriter{T}"/> that <c>jembench io --json</c> writes the document into.</summary>
public enum JsonWriterSide
{
    /// <summary><see cref="NativeBufferWriter{T}"/> of bytes: one native block grown with <c>rallocx</c>.</summary>
    Native,

    /// <summary><see cref="System.Buffers.ArrayBufferWriter{T}"/> of bytes: a managed array, doubled by copying.</summary>
    Array,

    /// <summary>CommunityToolkit.HighPerformance's <c>ArrayPoolBufferWriter&lt;byte&gt;</c>: arrays rented from <c>ArrayPool&lt;byte&gt;.Shared</c>.</summary>
    ArrayPool,

    /// <summary>
    /// The machine's limit, not a rival writer: the same encoding into a <see cref="NativeBufferWriter{T}"/>
    /// presized to the whole document and paged in before the timed region, so no writer's growth
    /// or page fault is timed.
    /// </summary>
    Limit,
}
