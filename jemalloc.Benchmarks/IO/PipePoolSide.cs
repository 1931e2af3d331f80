namespace jemalloc.Benchmarks.IO;

/// <summary>The memory pool of the <see cref="System.IO.Pipelines.Pipe"/> in <c>jembench io --pipe</c>.</summary>
public enum PipePoolSide
{
    /// <summary>A <see cref="JemMemoryPool"/>: native blocks.</summary>
    Jem,

    /// <summary>The pipe's default pool, <see cref="System.Buffers.MemoryPool{T}.Shared"/> (arrays from <c>ArrayPool&lt;byte&gt;.Shared</c>).</summary>
    Shared,
}
