namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Visits one contiguous chunk of a structure's elements, starting at element <paramref name="start"/>, under a lease.</summary>
/// <typeparam name="T">The element type.</typeparam>
public delegate void ChunkVisitor<T>(Span<T> chunk, long start);
