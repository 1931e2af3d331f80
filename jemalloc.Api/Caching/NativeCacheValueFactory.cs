using System.Buffers;

namespace jemalloc;

/// <summary>Writes the value of a key that <see cref="NativeCache.GetOrAdd{TState}"/> did not find.</summary>
/// <typeparam name="TState">The caller's state, passed through so the factory needs no closure.</typeparam>
/// <param name="key">The key.</param>
/// <param name="state">The caller's state.</param>
/// <param name="value">Where to write the value.</param>
public delegate void NativeCacheValueFactory<in TState>(ReadOnlySpan<byte> key, TState state, IBufferWriter<byte> value);
