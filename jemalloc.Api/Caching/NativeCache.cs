using System.Runtime.CompilerServices;
using System.Buffers;
using jemalloc.Caching;

namespace jemalloc;

/// <summary>
/// A concurrent cache of byte keys and values in native memory, held within a byte budget: millions of
/// entries cost the garbage collector nothing. Any number of threads read and write at once.
/// </summary>
/// <remarks>
/// <para>
/// Keys are byte strings: a <see cref="string"/> key is its UTF-8 bytes, an unmanaged struct key
/// (<see cref="long"/>, <see cref="Guid"/>, ...) its in-memory bytes, so the same bytes are the same key
/// whichever overload wrote them. Keys and values may be empty.
/// </para>
/// <para>
/// The budget counts every byte the cache holds from the allocator. A write evicts, before it returns,
/// what it must to stay within the budget; the policy admits and keeps entries by how often and how
/// recently they are read, weighed against their size, so a one-pass scan does not flush the entries in use.
/// A read gives a <see cref="NativeCacheLease"/> over the value in place, valid until the lease ends
/// whatever other threads do meanwhile.
/// </para>
/// </remarks>
public sealed unsafe partial class NativeCache : IDisposable
{
    /// <summary>The smallest budget a cache accepts.</summary>
    public const long MinimumBudgetBytes = 1 << 20;

    /// <summary>The longest key, in bytes.</summary>
    public const int MaxKeyLength = 1 << 16;

    /// <summary>
    /// The most bytes one entry can take, whatever the budget: a 16-byte header, the expiry fields (8 to
    /// 24 bytes, when it expires), the key and the value, rounded up to a multiple of 8. A write of a
    /// bigger entry throws <see cref="ArgumentException"/>; so does one the budget has no room for.
    /// </summary>
    // A big entry's segment is one block whose length, with a standard segment's, stays an int.
    public const int MaxEntryLength = (int.MaxValue - MaxSegmentBytes) & ~7;

    /// <summary>
    /// The fewest segments of a huge page (2 MiB) each shard's share of the budget must hold for a cache with
    /// huge pages to use such segments (<see cref="NativeCacheOptions.HugePages"/>); evicting a segment at a time
    /// from fewer would throw away too much at once.
    /// </summary>
    public const int HugeSegmentsPerShard = 64;

    /// <summary>Creates a cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> or its time provider is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The budget, shard count or scan interval is out of range.</exception>
    public NativeCache(NativeCacheOptions options) : this(options, validated: Validate(options))
    {
    }

    /// <summary>Creates a cache with a budget of <paramref name="budgetBytes"/> and the default settings.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="budgetBytes"/> is below <see cref="MinimumBudgetBytes"/>.</exception>
    public NativeCache(long budgetBytes) : this(new NativeCacheOptions { BudgetBytes = budgetBytes })
    {
    }

    /// <summary>The budget in bytes.</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public long BudgetBytes
    {
        get
        {
            ThrowIfDisposed();
            return _budget.Limit;
        }
    }

    /// <summary>The number of entries now (expired entries not yet given back may be counted).</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public long Count
    {
        get
        {
            ThrowIfDisposed();
            long count = 0;
            foreach (CacheShard shard in Volatile.Read(ref _generation).Shards)
            {
                count += shard.Count;
            }

            return count;
        }
    }

    /// <summary>Looks a key up and, if found, leases its value.</summary>
    /// <returns>Whether the key was found; <paramref name="lease"/> is <see langword="default"/> if not.</returns>
    /// <exception cref="ArgumentException">The key is longer than <see cref="MaxKeyLength"/>.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool TryGet(ReadOnlySpan<byte> key, out NativeCacheLease lease) => TryGetCore(key, out lease);

    /// <summary>Looks a UTF-8 key up and, if found, leases its value.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    [SkipLocalsInit] // The key's stack buffer is written by the encoder before it is read: zeroing it first costs a hit some nanoseconds.
    public bool TryGet(string key, out NativeCacheLease lease)
    {
        byte[]? rented = null;
        Span<byte> buffer = KeyBuffer(key, stackalloc byte[StackKeyBytes], ref rented);
        try
        {
            return TryGetCore(Utf8Key(key, buffer), out lease);
        }
        finally
        {
            Return(rented);
        }
    }

    /// <summary>Looks an unmanaged key up and, if found, leases its value.</summary>
    /// <exception cref="ArgumentException"><typeparamref name="TKey"/> is more than <see cref="MaxKeyLength"/> bytes.</exception>
    public bool TryGet<TKey>(scoped in TKey key, out NativeCacheLease lease) where TKey : unmanaged => TryGetCore(BytesOfReadOnly(in key), out lease);

    /// <summary>Copies a key's value into <paramref name="destination"/>.</summary>
    /// <returns>Whether the key was found.</returns>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than the value (the message gives its length).</exception>
    public bool TryCopyTo(ReadOnlySpan<byte> key, Span<byte> destination, out int bytesWritten) => TryCopyCore(key, destination, exactLength: -1, null, out bytesWritten);

    /// <summary>Writes a key's value to <paramref name="destination"/>.</summary>
    /// <returns>Whether the key was found.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    public bool TryWriteTo(ReadOnlySpan<byte> key, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        if (!TryGetCore(key, out NativeCacheLease lease))
        {
            return false;
        }

        using (lease)
        {
            destination.Write(lease.Span);
        }

        return true;
    }

    /// <summary>A copy of a key's value, or null if the key is not in the cache.</summary>
    public byte[]? GetBytes(ReadOnlySpan<byte> key)
    {
        if (!TryGetCore(key, out NativeCacheLease lease))
        {
            return null;
        }

        using (lease)
        {
            return lease.Span.ToArray();
        }
    }

    /// <summary>Reads a value written as one <typeparamref name="TValue"/>.</summary>
    /// <exception cref="InvalidOperationException">The value's length is not the size of <typeparamref name="TValue"/>.</exception>
    public bool TryGetValue<TValue>(ReadOnlySpan<byte> key, out TValue value) where TValue : unmanaged
    {
        value = default;
        return TryCopyCore(key, BytesOf(ref value), exactLength: sizeof(TValue), typeof(TValue), out _);
    }

    /// <summary>Reads a value written as one <typeparamref name="TValue"/> under an unmanaged key.</summary>
    /// <exception cref="InvalidOperationException">The value's length is not the size of <typeparamref name="TValue"/>.</exception>
    /// <exception cref="ArgumentException"><typeparamref name="TKey"/> is more than <see cref="MaxKeyLength"/> bytes.</exception>
    public bool TryGetValue<TKey, TValue>(in TKey key, out TValue value) where TKey : unmanaged where TValue : unmanaged => TryGetValue(BytesOfReadOnly(in key), out value);

    /// <summary>Whether the key is in the cache, without counting a read.</summary>
    public bool ContainsKey(ReadOnlySpan<byte> key) => Touch(key, TouchKind.Contains);

    // RS0026 guards against adding an optional parameter to a shipped overload. These overloads differ in
    // the key's and value's types, each with the same trailing optional options, so no call is ambiguous.
#pragma warning disable RS0026
    /// <summary>Writes a key's value, replacing any value it had.</summary>
    /// <exception cref="ArgumentException">The key is too long, or the entry is bigger than the budget.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An expiry in <paramref name="options"/> is not in the future.</exception>
    /// <exception cref="InvalidOperationException">Open leases hold so much of the budget that the entry cannot fit.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public void Set(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, NativeCacheEntryOptions options = default) => SetCore(key, default, value, fromSequence: false, options, lease: false, out _);

    /// <summary>Writes a key's value from a sequence of segments, replacing any value it had.</summary>
    /// <exception cref="ArgumentException">The key is too long, or the entry is bigger than the budget.</exception>
    public void Set(ReadOnlySpan<byte> key, ReadOnlySequence<byte> value, NativeCacheEntryOptions options = default) => SetCore(key, value, default, fromSequence: true, options, lease: false, out _);

    /// <summary>Writes a UTF-8 key's value.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    [SkipLocalsInit] // The key's stack buffer is written by the encoder before it is read: zeroing it first costs a hit some nanoseconds.
    public void Set(string key, ReadOnlySpan<byte> value, NativeCacheEntryOptions options = default)
    {
        byte[]? rented = null;
        Span<byte> buffer = KeyBuffer(key, stackalloc byte[StackKeyBytes], ref rented);
        try
        {
            SetCore(Utf8Key(key, buffer), default, value, fromSequence: false, options, lease: false, out _);
        }
        finally
        {
            Return(rented);
        }
    }

    /// <summary>Writes an unmanaged key's value.</summary>
    /// <exception cref="ArgumentException"><typeparamref name="TKey"/> is more than <see cref="MaxKeyLength"/> bytes.</exception>
    public void Set<TKey>(in TKey key, ReadOnlySpan<byte> value, NativeCacheEntryOptions options = default) where TKey : unmanaged => SetCore(BytesOfReadOnly(in key), default, value, fromSequence: false, options, lease: false, out _);

    /// <summary>Writes one <typeparamref name="TValue"/> as a key's value.</summary>
    public void SetValue<TValue>(ReadOnlySpan<byte> key, in TValue value, NativeCacheEntryOptions options = default) where TValue : unmanaged => SetCore(key, default, BytesOfReadOnly(in value), fromSequence: false, options, lease: false, out _);

    /// <summary>Writes one <typeparamref name="TValue"/> as an unmanaged key's value.</summary>
    /// <exception cref="ArgumentException"><typeparamref name="TKey"/> is more than <see cref="MaxKeyLength"/> bytes.</exception>
    public void SetValue<TKey, TValue>(in TKey key, in TValue value, NativeCacheEntryOptions options = default) where TKey : unmanaged where TValue : unmanaged => SetCore(BytesOfReadOnly(in key), default, BytesOfReadOnly(in value), fromSequence: false, options, lease: false, out _);

#pragma warning restore RS0026

    /// <summary>Removes a key. Open leases on its value stay valid.</summary>
    /// <returns>Whether the key was in the cache.</returns>
    public bool Remove(ReadOnlySpan<byte> key) => Touch(key, TouchKind.Remove);

    /// <summary>Removes a UTF-8 key.</summary>
    [SkipLocalsInit] // The key's stack buffer is written by the encoder before it is read: zeroing it first costs a hit some nanoseconds.
    public bool Remove(string key)
    {
        byte[]? rented = null;
        Span<byte> buffer = KeyBuffer(key, stackalloc byte[StackKeyBytes], ref rented);
        try
        {
            return Touch(Utf8Key(key, buffer), TouchKind.Remove);
        }
        finally
        {
            Return(rented);
        }
    }

    /// <summary>Removes an unmanaged key.</summary>
    /// <exception cref="ArgumentException"><typeparamref name="TKey"/> is more than <see cref="MaxKeyLength"/> bytes.</exception>
    public bool Remove<TKey>(in TKey key) where TKey : unmanaged => Touch(BytesOfReadOnly(in key), TouchKind.Remove);

    /// <summary>Restarts a key's sliding expiry as a read would, without reading the value.</summary>
    /// <returns>Whether the key was in the cache.</returns>
    public bool Refresh(ReadOnlySpan<byte> key) => Touch(key, TouchKind.Refresh);

    /// <summary>
    /// Leases a key's value, calling <paramref name="factory"/> to write it if the key is not in the cache.
    /// However many threads ask for the same missing key at once, one of them calls the factory and the
    /// others wait for its value; if the factory throws, each of those calls throws its exception and the
    /// next call tries again.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="InvalidOperationException">The factory asked for its own key again (it would wait for itself).</exception>
    public NativeCacheLease GetOrAdd<TState>(ReadOnlySpan<byte> key, TState state, NativeCacheValueFactory<TState> factory, NativeCacheEntryOptions options = default) => GetOrAddCore(key, state, factory, options);

    /// <summary>
    /// Reads a key's value with <paramref name="reader"/>, first calling <paramref name="factory"/> to write it
    /// if the key is not in the cache; one factory call per missing key however many callers wait for it
    /// (as <see cref="GetOrAdd{TState}"/>). The value cannot go away while <paramref name="reader"/> runs.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> or <paramref name="reader"/> is null.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled while this call waited or its factory ran.</exception>
    /// <exception cref="InvalidOperationException">The factory asked for its own key again (it would wait for itself).</exception>
    public ValueTask<TResult> GetOrAddAsync<TState, TResult>(
        ReadOnlyMemory<byte> key, TState state, Func<TState, IBufferWriter<byte>, CancellationToken, ValueTask> factory,
        NativeCacheValueReader<TState, TResult> reader, NativeCacheEntryOptions options = default, CancellationToken cancellationToken = default)
        => GetOrAddAsyncCore(key, state, factory, reader, options, cancellationToken);

    /// <summary>
    /// Drops every entry at once, without visiting them: the memory goes back to the allocator as a whole,
    /// and memory under open leases when their last lease ends.
    /// </summary>
    public void Clear() => ClearCore();

    /// <summary>Gives back the memory of entries that have expired now, rather than at the next scan.</summary>
    public void RemoveExpired() => RemoveExpiredCore();

    /// <summary>The cache's counters now.</summary>
    public NativeCacheStatistics GetStatistics() => GetStatisticsCore();

    /// <summary>Frees all of the cache's memory.</summary>
    /// <exception cref="InvalidOperationException">Leases are still open (the message gives how many); nothing is freed.</exception>
    public void Dispose() => DisposeCore();
}
