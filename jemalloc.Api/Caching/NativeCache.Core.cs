using System.Buffers;
using System.IO.Hashing;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Unicode;
using jemalloc.Caching;
using jemalloc.HugePages;
using jemalloc.Internal;

namespace jemalloc;

// The machinery behind NativeCache's members: options, key bytes, shards and generations, reads and
// writes under a shard's lock, room made across shards, Clear, Dispose and the statistics.
public sealed unsafe partial class NativeCache
{
    private const string TypeName = nameof(NativeCache);
    // A string key up to this many UTF-8 bytes is encoded on the stack; a longer one in a pooled array.
    private const int StackKeyBytes = 512;
    private const int MaxShards = 1024;
    // The least budget a shard may have: room for its tables and a few small segments.
    private const int MinShardBytes = 64 << 10;
    private const int MinSegmentBytes = 4 << 10;
    private const int MaxSegmentBytes = 4 << 20;
    // Writes a shard takes between looks at the clock for a sweep of its expired segments.
    private const int SweepCheckMask = 63;

    private readonly CacheBudget _budget;
    private readonly TimeProvider _time;
    private readonly int _shardShift;
    private readonly int _shardCount;
    private readonly int _segmentBytes;
    private readonly bool _hugePages;
    private readonly long _scanIntervalMs;
    private readonly long _tableBytesPerShard;
    private readonly Lock _lifecycle = new();
    private readonly Lock _pendingGate = new();
    private readonly List<CacheGeneration> _pending = [];
    private readonly Action<CacheGeneration> _arenaGone;
    private readonly CacheSweepTimer? _timer;
    private CacheGeneration _generation;
    private CacheCounters _pastCounters;
    private long _cleared;
    private volatile bool _disposed;

    private NativeCache(NativeCacheOptions options, bool validated)
    {
        _ = validated;
        _time = options.TimeProvider;
        _budget = new CacheBudget(options.BudgetBytes);
        _shardCount = options.ShardCount != 0 ? options.ShardCount : DefaultShardCount(options.BudgetBytes);
        _shardShift = 64 - BitOperations.Log2((uint)_shardCount);
        _hugePages = options.HugePages;
        _segmentBytes = SegmentBytesFor(options.BudgetBytes, _shardCount, _hugePages);
        _scanIntervalMs = options.ExpirationScanInterval == Timeout.InfiniteTimeSpan ? long.MaxValue : Math.Max(1, (long)options.ExpirationScanInterval.TotalMilliseconds);
        _arenaGone = ArenaGone;
        _generation = new CacheGeneration(this, _budget, _shardCount, _segmentBytes, _hugePages, _arenaGone);
        // The smallest tables a shard starts with, which no eviction gives back (for the check of a write bigger than the budget).
        _tableBytesPerShard = _generation.UsableSize(512 * sizeof(ulong)) + _generation.UsableSize(256 * sizeof(uint));
        if (_scanIntervalMs != long.MaxValue)
        {
            _timer = new CacheSweepTimer(this, _time, options.ExpirationScanInterval);
        }
    }

    /// <summary>The size of a standard segment, in bytes (a power of two chosen from the budget and the shard count).</summary>
    internal int SegmentBytes => _segmentBytes;

    /// <summary>The number of shards.</summary>
    internal int ShardCount => _shardCount;

    /// <summary>Index slots whose reach hint disagrees with their entry, over every shard (tests).</summary>
    internal int StaleReachHints()
    {
        int stale = 0;
        foreach (CacheShard shard in Volatile.Read(ref _generation).Shards)
        {
            lock (shard.Gate)
            {
                stale += shard.StaleReachHints();
            }
        }

        return stale;
    }

    /// <summary>The shard a key's bytes belong to now (for tests that hold a shard's lock).</summary>
    internal CacheShard ShardOfKey(ReadOnlySpan<byte> key) => ShardOf(XxHash3.HashToUInt64(key));

    /// <summary>The cache's clock, in milliseconds.</summary>
    internal long NowMs() => _time.GetUtcNow().ToUnixTimeMilliseconds();

    private static bool Validate(NativeCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(options.TimeProvider, nameof(options) + "." + nameof(NativeCacheOptions.TimeProvider));
        if (options.BudgetBytes < MinimumBudgetBytes)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options) + "." + nameof(NativeCacheOptions.BudgetBytes), options.BudgetBytes, $"The budget must be at least {MinimumBudgetBytes:N0} bytes.");
        }

        if (options.ShardCount != 0 && (options.ShardCount < 0 || options.ShardCount > MaxShards || !BitOperations.IsPow2(options.ShardCount)))
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options) + "." + nameof(NativeCacheOptions.ShardCount), options.ShardCount, $"The shard count must be a power of two from 1 to {MaxShards}, or 0 to choose it.");
        }

        if (options.ShardCount > options.BudgetBytes / MinShardBytes)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options) + "." + nameof(NativeCacheOptions.ShardCount), options.ShardCount, $"{options.ShardCount} shards need a budget of at least {options.ShardCount * (long)MinShardBytes:N0} bytes ({MinShardBytes / 1024} KiB each, for a few segments and the tables); the budget is {options.BudgetBytes:N0}.");
        }

        TimeSpan interval = options.ExpirationScanInterval;
        if (interval != Timeout.InfiniteTimeSpan && (interval <= TimeSpan.Zero || interval.TotalMilliseconds > int.MaxValue))
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options) + "." + nameof(NativeCacheOptions.ExpirationScanInterval), interval, "The expiration scan interval must be positive (at most 24 days) or Timeout.InfiniteTimeSpan.");
        }

        return true;
    }

    // Four shards a processor, fewer while a shard would hold less than 2 MiB (32 segments of 64 KiB).
    private static int DefaultShardCount(long budget)
    {
        int shards = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Clamp(Environment.ProcessorCount * 4, 1, 256));
        while (shards > 1 && budget / shards < 2 << 20)
        {
            shards /= 2;
        }

        return shards;
    }

    // Whether each shard's share of the budget holds HugeSegmentsPerShard segments of a huge page.
    private static bool HugeSegmentsFit(long budget, int shards) => budget / shards / HugeSegmentsPerShard >= (long)HugePageAdvisor.HugePageSize;

    // About 128 segments a shard (the heads being filled and the spare are a small share of it), a power of two
    // from 4 KiB to 4 MiB. With huge pages, at least a huge page each where a shard holds enough of them:
    // memory is advised for huge pages only in whole 2 MiB blocks, so smaller segments would get none.
    private static int SegmentBytesFor(long budget, int shards, bool hugePages)
    {
        long share = Math.Max(1, budget / shards / 128);
        long size = (long)BitOperations.RoundUpToPowerOf2((ulong)share);
        if (size > share)
        {
            size /= 2;
        }

        if (hugePages && HugeSegmentsFit(budget, shards))
        {
            size = Math.Max(size, (long)HugePageAdvisor.HugePageSize);
        }

        return (int)Math.Clamp(size, MinSegmentBytes, MaxSegmentBytes);
    }

    // ---------------------------------------------------------------- keys

    private static void CheckKey(ReadOnlySpan<byte> key)
    {
        if (key.Length > MaxKeyLength)
        {
            ThrowKeyTooLong(key.Length);
        }
    }

    private static void ThrowKeyTooLong(long length) =>
        ThrowHelper.ThrowArgument("key", $"The key is {length:N0} bytes; a key is at most {MaxKeyLength:N0} bytes.");

    private static Span<byte> KeyBuffer(string key, Span<byte> stack, ref byte[]? rented)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (key.Length > MaxKeyLength)
        {
            // Each char is at least one UTF-8 byte.
            ThrowKeyTooLong(key.Length);
        }

        int most = Encoding.UTF8.GetMaxByteCount(key.Length);
        if (most <= stack.Length)
        {
            return stack;
        }

        rented = ArrayPool<byte>.Shared.Rent(most);
        return rented;
    }

    // Strict, as the jemalloc.NET.Caching add-on encodes: a lone surrogate would otherwise become
    // U+FFFD, and two different strings one key.
    private static ReadOnlySpan<byte> Utf8Key(string key, Span<byte> buffer)
    {
        if (Utf8.FromUtf16(key, buffer, out int charsRead, out int written, replaceInvalidSequences: false) != OperationStatus.Done)
        {
            ThrowKeyNotUtf16(charsRead);
        }

        return buffer[..written];
    }

    private static void ThrowKeyNotUtf16(int index) =>
        ThrowHelper.ThrowArgument("key", $"The key is not valid UTF-16: it has a lone surrogate at index {index}. A NativeCache keys a string by its UTF-8 bytes, which cannot represent one (with it, two different keys would be the same).");

    private static void Return(byte[]? rented)
    {
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private static Span<byte> BytesOf<T>(ref T value) where T : unmanaged => MemoryMarshal.AsBytes(new Span<T>(ref value));

    private static ReadOnlySpan<byte> BytesOfReadOnly<T>(in T value) where T : unmanaged => MemoryMarshal.AsBytes(new ReadOnlySpan<T>(in value));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private CacheShard ShardOf(ulong hash)
    {
        CacheShard[] shards = Volatile.Read(ref _generation).Shards;
        return _shardCount == 1 ? shards[0] : shards[(int)(hash >> _shardShift)];
    }

    // A shard closed by Clear or Dispose: throws once disposed, else waits for the new generation.
    private void WaitForGeneration()
    {
        if (_disposed)
        {
            ThrowHelper.ThrowDisposed(TypeName);
        }

        lock (_lifecycle)
        {
            if (_disposed)
            {
                ThrowHelper.ThrowDisposed(TypeName);
            }
        }
    }

    // ---------------------------------------------------------------- reads

    private bool TryGetCore(scoped ReadOnlySpan<byte> key, out NativeCacheLease lease)
    {
        CheckKey(key);
        ulong hash = XxHash3.HashToUInt64(key);
        while (true)
        {
            CacheShard shard = ShardOf(hash);
            CacheSegment segment;
            byte* value;
            int length;
            lock (shard.Gate)
            {
                if (shard.Closed)
                {
                    goto Closed;
                }

                byte* entry = FindLive(shard, key, hash, out int slot);
                if (entry == null)
                {
                    shard.Counters.Misses++;
                    lease = default;
                    return false;
                }

                CacheEntry.AddHit(entry);
                shard.Counters.Hits++;
                segment = shard.SegmentAt(slot);
                segment.Pin();
                value = CacheEntry.Value(entry);
                length = CacheEntry.ValueLength(entry);
            }

            lease = NativeCacheLease.Open(segment, value, length);
            return true;
        Closed:
            WaitForGeneration();
        }
    }

    // The key's entry if it is there and has not expired (an expired one is dropped, and its sliding
    // deadline pushed on if it slides); null otherwise. Under the shard's lock.
    private byte* FindLive(CacheShard shard, ReadOnlySpan<byte> key, ulong hash, out int slot)
    {
        if (!shard.Find(key, (uint)hash, (ushort)(hash >> 32), out slot, out byte* entry))
        {
            return null;
        }

        if (CacheEntry.Expires(entry))
        {
            long now = NowMs();
            if (CacheEntry.Deadline(entry) <= now)
            {
                shard.Drop(slot, entry);
                shard.Counters.Expired++;
                return null;
            }

            CacheEntry.Slide(entry, now);
        }

        return entry;
    }

    private bool TryCopyCore(ReadOnlySpan<byte> key, Span<byte> destination, int exactLength, Type? valueType, out int bytesWritten)
    {
        CheckKey(key);
        ulong hash = XxHash3.HashToUInt64(key);
        int length;
        while (true)
        {
            CacheShard shard = ShardOf(hash);
            lock (shard.Gate)
            {
                if (shard.Closed)
                {
                    goto Closed;
                }

                byte* entry = FindLive(shard, key, hash, out _);
                if (entry == null)
                {
                    shard.Counters.Misses++;
                    bytesWritten = 0;
                    return false;
                }

                CacheEntry.AddHit(entry);
                shard.Counters.Hits++;
                length = CacheEntry.ValueLength(entry);
                if ((exactLength < 0 && length <= destination.Length) || length == exactLength)
                {
                    new ReadOnlySpan<byte>(CacheEntry.Value(entry), length).CopyTo(destination);
                    bytesWritten = length;
                    return true;
                }
            }

            break;
        Closed:
            WaitForGeneration();
        }

        if (valueType is not null)
        {
            ThrowWrongValueSize(length, exactLength, valueType);
        }

        ThrowHelper.ThrowArgument(nameof(destination), $"The value is {length:N0} bytes; the destination holds {destination.Length:N0}.");
        bytesWritten = 0;
        return false;
    }

    /// <summary>Throws the <see cref="InvalidOperationException"/> of a value read as a type of another size.</summary>
    internal static void ThrowWrongValueSize(int length, int size, Type type) =>
        ThrowHelper.ThrowInvalidOperation($"The value is {length:N0} bytes, not the {size:N0} bytes of {type.Name}.");

    private enum TouchKind
    {
        Contains,
        Remove,
        Refresh,
    }

    private bool Touch(ReadOnlySpan<byte> key, TouchKind kind)
    {
        CheckKey(key);
        ulong hash = XxHash3.HashToUInt64(key);
        while (true)
        {
            CacheShard shard = ShardOf(hash);
            lock (shard.Gate)
            {
                if (shard.Closed)
                {
                    goto Closed;
                }

                byte* entry;
                int slot;
                if (kind == TouchKind.Refresh)
                {
                    entry = FindLive(shard, key, hash, out slot);
                }
                else if (shard.Find(key, (uint)hash, (ushort)(hash >> 32), out slot, out entry) &&
                    CacheEntry.Expires(entry) && CacheEntry.Deadline(entry) <= NowMs())
                {
                    shard.Drop(slot, entry);
                    shard.Counters.Expired++;
                    entry = null;
                }

                if (entry == null)
                {
                    return false;
                }

                if (kind == TouchKind.Remove)
                {
                    shard.Drop(slot, entry);
                    shard.Counters.Removed++;
                }

                return true;
            }

        Closed:
            WaitForGeneration();
        }
    }

    // ---------------------------------------------------------------- writes

    private void SetCore(scoped ReadOnlySpan<byte> key, scoped in ReadOnlySequence<byte> sequence, scoped ReadOnlySpan<byte> span, bool fromSequence, scoped in NativeCacheEntryOptions options, bool lease, out NativeCacheLease opened)
    {
        CheckKey(key);
        long valueLength = fromSequence ? sequence.Length : span.Length;
        CacheExpiry expiry = CacheExpiry.None;
        long nowMs = 0;
        if (options.AbsoluteExpiration.HasValue || options.AbsoluteExpirationRelativeToNow.HasValue || options.SlidingExpiration.HasValue)
        {
            DateTimeOffset now = _time.GetUtcNow();
            nowMs = now.ToUnixTimeMilliseconds();
            expiry = CacheExpiry.From(options, nowMs, now);
        }

        CheckFits(key.Length, valueLength, expiry.Bytes);
        ulong hash = XxHash3.HashToUInt64(key);
        int barrenWaits = 0;
        while (true)
        {
            // Read before the write: a refusal with a Clear under way or begun since is no lack of room.
            long clears = Volatile.Read(ref _clearsStarted);
            long drops = Volatile.Read(ref _dropsDone);
            CacheShard shard = ShardOf(hash);
            CacheSegment segment;
            byte* entry;
            long roomNeeded;
            lock (shard.Gate)
            {
                if (shard.Closed)
                {
                    goto Closed;
                }

                if ((shard.Counters.Writes & SweepCheckMask) == 0 && shard.HasExpiring)
                {
                    long now = NowMs();
                    if (now >= shard.NextSweepMs)
                    {
                        shard.NextSweepMs = CacheEntry.SaturatingAdd(now, _scanIntervalMs == long.MaxValue ? 1000 : _scanIntervalMs);
                        shard.Sweep(now);
                    }
                }

                try
                {
                    entry = shard.Write(key, hash, sequence, span, fromSequence, expiry, nowMs, out segment);
                }
                catch (InvalidOperationException) when (ClearRaced(clears, drops))
                {
                    // The generation was being retired (its other shards closed) or the old one's memory
                    // not yet given back: the write is retried on the current one once that is done.
                    goto Raced;
                }

                if (entry == null)
                {
                    roomNeeded = shard.RoomNeeded;
                    goto NoRoom;
                }

                if (!lease)
                {
                    opened = default;
                    return;
                }

                segment.Pin();
            }

            opened = NativeCacheLease.Open(segment, CacheEntry.Value(entry), CacheEntry.ValueLength(entry));
            return;
        NoRoom:
            // Out of this shard's lock, the others are waited for rather than tried. A pass that frees
            // nothing anywhere, twice running, means open leases pin the memory, unless a Clear raced
            // the write (its old generation's memory is given back once it is dropped).
            if (WaitForRoomElsewhere(shard))
            {
                barrenWaits = 0;
            }
            else if (ClearRaced(clears, drops))
            {
                barrenWaits = 0;
                WaitForDrops();
            }
            else if (++barrenWaits == 2)
            {
                ThrowNoRoom(roomNeeded, _budget);
            }

            continue;
        Raced:
            WaitForDrops();
            continue;
        Closed:
            WaitForGeneration();
        }
    }

    /// <summary>
    /// For a write whose shard found no room and could not enter the others (see
    /// <see cref="FreeRoomElsewhere"/>): enters each other shard of its generation in turn, waiting for its lock,
    /// until one gives memory back. The caller holds no shard's lock, and this holds one at a time, so it
    /// cannot deadlock.
    /// </summary>
    /// <returns>Whether a shard gave memory back.</returns>
    private static bool WaitForRoomElsewhere(CacheShard requester)
    {
        CacheShard[] shards = requester.Generation.Shards;
        int start = Array.IndexOf(shards, requester);
        for (int step = 1; step < shards.Length; step++)
        {
            CacheShard shard = shards[(start + step) % shards.Length];
            lock (shard.Gate)
            {
                if (!shard.Closed && shard.GiveBack())
                {
                    return true;
                }
            }
        }

        return false;
    }

    // Whether a Clear was under way when a write began, or began since.
    private bool ClearRaced(long clears, long drops) =>
        drops != clears || Volatile.Read(ref _clearsStarted) != clears || Volatile.Read(ref _dropsDone) != drops;

    // Waits for the Clears begun so far to have given their generations' memory back.
    private void WaitForDrops()
    {
        long target = Volatile.Read(ref _clearsStarted);
        SpinWait spin = default;
        while (Volatile.Read(ref _dropsDone) < target)
        {
            spin.SpinOnce();
        }
    }

    // An entry bigger than MaxEntryLength, or than the budget less the tables of its shard, can never be written.
    private void CheckFits(int keyLength, long valueLength, int expiryBytes)
    {
        long size = CacheEntry.SizeOf(keyLength, valueLength, expiryBytes);
        if (size > MaxEntryLength)
        {
            ThrowEntryTooLong(size, keyLength, valueLength);
        }

        // The writer's shard keeps its tables; the others give theirs back once emptied.
        long room = _budget.Limit - _tableBytesPerShard;
        long needed = size <= _segmentBytes ? _segmentBytes : Volatile.Read(ref _generation).UsableSize(size);
        if (needed > room)
        {
            ThrowHelper.ThrowArgument("value", $"The entry takes {size:N0} bytes ({needed:N0} as allocated); the cache's budget of {_budget.Limit:N0} bytes has room for at most {room:N0} besides its tables.");
        }
    }

    private static void ThrowEntryTooLong(long size, int keyLength, long valueLength) =>
        ThrowHelper.ThrowArgument("value", $"The entry takes {size:N0} bytes (a {valueLength:N0}-byte value and a {keyLength:N0}-byte key with their header); an entry is at most {MaxEntryLength:N0} bytes (NativeCache.MaxEntryLength), whatever the budget.");

    /// <summary>
    /// For a write in <paramref name="requester"/> that found no room there: gives memory back from
    /// other shards of the same generation. The caller holds its own shard's lock, so others are
    /// only tried (waiting a little, never indefinitely), which cannot deadlock; when this fails the
    /// write leaves its lock and waits for them (<see cref="WaitForRoomElsewhere"/>).
    /// </summary>
    internal static bool FreeRoomElsewhere(CacheShard requester, CacheShard[] shards)
    {
        int start = Array.IndexOf(shards, requester);
        for (int round = 0; round < 8; round++)
        {
            for (int step = 1; step < shards.Length; step++)
            {
                CacheShard shard = shards[(start + step) % shards.Length];
                if (!shard.Gate.TryEnter(round == 0 ? 0 : round))
                {
                    continue;
                }

                try
                {
                    if (!shard.Closed && shard.GiveBack())
                    {
                        return true;
                    }
                }
                finally
                {
                    shard.Gate.Exit();
                }
            }
        }

        return false;
    }

    /// <summary>The <see cref="InvalidOperationException"/> of a write that open leases leave no room for.</summary>
    internal static void ThrowNoRoom(long needed, CacheBudget budget) =>
        ThrowHelper.ThrowInvalidOperation(
            $"The cache cannot make room for {needed:N0} bytes: {budget.Allocated:N0} of its {budget.Limit:N0}-byte budget are held, " +
            $"{budget.Pinned:N0} of them only by open leases (NativeCacheLease) on entries that already left the cache, and nothing else can be evicted. Dispose leases sooner.");

    // ---------------------------------------------------------------- expiry

    private void RemoveExpiredCore()
    {
        ThrowIfDisposed();
        SweepAll();
    }

    /// <summary>Sweeps every shard's expired segments (the timer's tick, and <see cref="RemoveExpired"/>).</summary>
    internal void SweepAll()
    {
        long now = NowMs();
        foreach (CacheShard shard in Volatile.Read(ref _generation).Shards)
        {
            lock (shard.Gate)
            {
                if (shard.Closed)
                {
                    return;
                }

                if (shard.HasExpiring)
                {
                    shard.NextSweepMs = CacheEntry.SaturatingAdd(now, _scanIntervalMs == long.MaxValue ? 1000 : _scanIntervalMs);
                    shard.Sweep(now);
                }
            }
        }
    }
}
