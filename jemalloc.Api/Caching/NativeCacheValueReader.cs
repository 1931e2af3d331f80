namespace jemalloc;

/// <summary>
/// Reads a cached value while the cache keeps it alive (<see cref="NativeCache.GetOrAddAsync{TState, TResult}"/>):
/// the span is valid only during the call.
/// </summary>
/// <typeparam name="TState">The caller's state.</typeparam>
/// <typeparam name="TResult">What the reader makes of the value.</typeparam>
/// <param name="value">The value's bytes.</param>
/// <param name="state">The caller's state.</param>
/// <returns>The result given back to the caller.</returns>
public delegate TResult NativeCacheValueReader<in TState, out TResult>(ReadOnlySpan<byte> value, TState state);
