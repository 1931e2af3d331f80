using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;
using jemalloc.Ledger;

namespace jemalloc.Caching;

/// <summary>
/// One shard of a <see cref="NativeCache"/> generation, under its own lock: the index of its keys, its
/// segments in their logs (S3-FIFO's small and main logs, and the TTL logs of expiring entries), the
/// ghost table of keys recently evicted from the small log, and its counters.
/// </summary>
/// <remarks>
/// <para>
/// The index is open addressing with linear probing and backward-shift deletion: each 8-byte slot is
/// the key's 16-bit tag, its segment's number and its offset in eighths; 0 is an empty slot (segment
/// numbers start at 1). It doubles at 3/4 load, rehashed from the hash in each entry's header.
/// </para>
/// <para>
/// Every member but the constructor runs under <see cref="Gate"/>; <see cref="Closed"/> is set, under
/// it, when the generation is dropped, after which nothing touches the shard.
/// </para>
/// </remarks>
internal sealed unsafe partial class CacheShard
{
    internal const int SmallLog = 0;
    internal const int MainLog = 1;
    internal const int FirstTtlLog = 2;
    internal const int TtlLogCount = 24;

    private const int InitialIndexSlots = 512;
    private const int FreeSegmentsKept = 2;
    // A slot: the tag (16 bits), the segment's number (16), how many cache lines past the entry's first
    // its value ends (12, saturating; a hint only) and the entry's offset in eighths (20: segments hold
    // at most MaxSegmentBytes, 4 MiB, and a segment of its own holds one entry, at offset 0).
    private const int ReachShift = 20;
    private const ulong ReachMask = 0xFFF;
    private const ulong OffsetMask = (1UL << ReachShift) - 1;
    private const ulong LocationMask = 0xFFFF_FFFF_FFFF & ~(ReachMask << ReachShift);

    private readonly NativeCache _cache;
    private readonly CacheGeneration _generation;
    private readonly Queue<CacheSegment>?[] _logs = new Queue<CacheSegment>?[FirstTtlLog + TtlLogCount];
    private readonly CacheSegment?[] _heads = new CacheSegment?[FirstTtlLog + TtlLogCount];
    private readonly long[] _logBytes = new long[FirstTtlLog + TtlLogCount];
    private readonly Stack<CacheSegment> _free = new();
    private readonly Stack<ushort> _freeIds = new();
    private CacheSegment?[] _segments = new CacheSegment?[16];
    private int _nextId = 1;
    private long _sequence;
    private long _segmentBytes;

    private LedgerBlock _indexBlock;
    private ulong* _slots;
    private int _mask = -1;
    private long _indexHeld;
    private LedgerBlock _ghostBlock;
    private uint* _ghost;
    private int _ghostMask;
    private long _ghostHeld;

    private int _count;
    private long _keyValueBytes;
    private long _entryBytes;
    private long _deadBytes;
    private long _nextSweepMs;

    internal CacheShard(NativeCache cache, CacheGeneration generation)
    {
        _cache = cache;
        _generation = generation;
    }

    /// <summary>The generation the shard belongs to.</summary>
    internal CacheGeneration Generation => _generation;

    /// <summary>The shard's lock.</summary>
    internal Lock Gate { get; } = new();

    /// <summary>Whether the generation was dropped: callers go to the cache's current one.</summary>
    internal bool Closed { get; set; }

    /// <summary>The counters.</summary>
    internal ref CacheCounters Counters => ref _counters;

    /// <summary>Entries indexed now.</summary>
    internal int Count => _count;

    /// <summary>Their key and value bytes.</summary>
    internal long KeyValueBytes => _keyValueBytes;

    /// <summary>The bytes of dead entries and slack in the shard's segments, waiting for their segment's reclaim.</summary>
    internal long DeadBytes => _deadBytes;

    /// <summary>A moment (cache clock) from which the next call may sweep expired segments.</summary>
    internal long NextSweepMs
    {
        get => _nextSweepMs;
        set => _nextSweepMs = value;
    }

    /// <summary>Bumped whenever entries move or leave; a caller that saw one value may keep an entry pointer until it changes.</summary>
    internal long Version { get; private set; }

    private CacheCounters _counters;

    // ---------------------------------------------------------------- lookups

    /// <summary>Finds <paramref name="key"/>: its slot and entry.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool Find(ReadOnlySpan<byte> key, uint hash, ushort tag, out int slot, out byte* entry)
    {
        if (_slots != null)
        {
            int i = (int)hash & _mask;
            while (true)
            {
                ulong value = _slots[i];
                if (value == 0)
                {
                    break;
                }

                if ((ushort)(value >> 48) == tag)
                {
                    byte* candidate = EntryOf(value, out _);
                    Prefetch(candidate, value);
                    if (CacheEntry.Hash(candidate) == hash && CacheEntry.KeyLength(candidate) == key.Length &&
                        new ReadOnlySpan<byte>(CacheEntry.Key(candidate), key.Length).SequenceEqual(key))
                    {
                        slot = i;
                        entry = candidate;
                        return true;
                    }
                }

                i = (i + 1) & _mask;
            }
        }

        slot = -1;
        entry = null;
        return false;
    }

    /// <summary>The segment of the entry in <paramref name="slot"/>.</summary>
    internal CacheSegment SegmentAt(int slot) => _segments[(int)((_slots[slot] >> 32) & 0xFFFF)]!;

    /// <summary>Drops the entry in <paramref name="slot"/> (removed, or found expired): it is dead, its bytes wait for its segment's reclaim.</summary>
    internal void Drop(int slot, byte* entry)
    {
        MarkDead(SegmentAt(slot), entry);
        RemoveSlot(slot);
        _count--;
        _keyValueBytes -= CacheEntry.KeyLength(entry) + (long)CacheEntry.ValueLength(entry);
        _entryBytes -= CacheEntry.Size(entry);
        Version++;
    }

    // Marks an entry of `segment` dead: its bytes count as dead until the segment is reclaimed. Its
    // slack already counts (since the in-place write that left it), so only the rest is added.
    private void MarkDead(CacheSegment segment, byte* entry)
    {
        CacheEntry.MarkDead(entry);
        long size = CacheEntry.CompactSize(entry);
        segment.DeadBytes += size;
        _deadBytes += size;
    }

    // ---------------------------------------------------------------- writes

    /// <summary>
    /// Bytes a write that returned null needs other shards to give back: they were only tried (their locks
    /// may be held), so the caller waits for them, one at a time, once it has left this shard's lock.
    /// </summary>
    internal long RoomNeeded { get; private set; }

    /// <summary>
    /// Writes an entry, replacing the key's old one: makes room first (evicting in this shard, then
    /// trying others), so a write that fails leaves the old value in place.
    /// </summary>
    /// <returns>
    /// The new entry, and its segment (for a lease the caller may take under the same lock); null if the
    /// other shards could not be entered or had nothing to give (see <see cref="RoomNeeded"/>), the key's old value unchanged.
    /// </returns>
    internal byte* Write(ReadOnlySpan<byte> key, ulong hash64, in ReadOnlySequence<byte> sequenceValue, ReadOnlySpan<byte> spanValue, bool fromSequence, in CacheExpiry expiry, long nowMs, out CacheSegment segment)
    {
        uint hash = (uint)hash64;
        ushort tag = (ushort)(hash64 >> 32);
        long valueLength = fromSequence ? sequenceValue.Length : spanValue.Length;
        long size = CacheEntry.SizeOf(key.Length, valueLength, expiry.Bytes);

        // A replacement that fits the old entry's bytes, in a segment no lease pins, goes over them:
        // no new bytes and no dead ones, and it cannot fail for lack of room.
        if (_slots != null && Find(key, hash, tag, out int inPlaceSlot, out byte* current) &&
            CanReplaceInPlace(inPlaceSlot, current, size, expiry, nowMs, out segment))
        {
            long slack = CacheEntry.Size(current) - size;
            long deadChange = slack - CacheEntry.Slack(current);
            _keyValueBytes += valueLength - CacheEntry.ValueLength(current);
            WriteEntry(current, segment, key, sequenceValue, spanValue, fromSequence, valueLength, hash, tag, expiry, CacheEntry.Hits(current), slack);
            _slots[inPlaceSlot] = Pack(tag, segment.Id, (int)(current - segment.Pointer), current);
            segment.DeadBytes += deadChange;
            _deadBytes += deadChange;
            _counters.Replaced++;
            _counters.ReplacedInPlace++;
            _counters.Writes++;
            Version++;
            return current;
        }

        if (!EnsureIndexRoom())
        {
            segment = null!;
            return null;
        }

        bool found = Find(key, hash, tag, out int slot, out byte* old);
        long version = Version;
        int log;
        int hits = 0;
        if (expiry.Expires)
        {
            log = TtlLogOf(expiry, nowMs);
        }
        else if (found)
        {
            log = SegmentAt(slot).Log == SmallLog ? SmallLog : MainLog;
            hits = CacheEntry.Hits(old);
        }
        else
        {
            log = InGhost(hash, tag) ? MainLog : SmallLog;
        }

        // The old entry is kept while room is made for its replacement: moved rather than evicted, or
        // set aside and put back if the write fails, so a failed write leaves the old value.
        _replacing = found ? old : null;
        _replacingMoved = false;
        byte* entry;
        try
        {
            entry = Append(size, log, out segment);
        }
        catch
        {
            RestoreDisplaced();
            throw;
        }
        finally
        {
            _replacing = null;
        }

        if (entry == null)
        {
            RestoreDisplaced();
            return null;
        }

        bool displaced = _displaced is not null;
        _displaced = null;
        if (Version != version)
        {
            // Making room moved or evicted entries, perhaps the old one.
            found = Find(key, hash, tag, out slot, out old);
        }

        if (displaced)
        {
            _counters.Replaced++;
        }

        WriteEntry(entry, segment, key, sequenceValue, spanValue, fromSequence, valueLength, hash, tag, expiry, hits, slack: 0);
        ulong location = Pack(tag, segment.Id, (int)(entry - segment.Pointer), entry);
        if (found)
        {
            MarkDead(SegmentAt(slot), old);
            _keyValueBytes -= CacheEntry.KeyLength(old) + (long)CacheEntry.ValueLength(old);
            _entryBytes -= CacheEntry.Size(old);
            _slots[slot] = location;
            _counters.Replaced++;
            Version++;
        }
        else
        {
            Insert(location, hash);
            _count++;
        }

        _keyValueBytes += key.Length + valueLength;
        _entryBytes += size;
        _counters.Writes++;
        return entry;
    }

    // The one place an entry's bytes are written, by an append and by a replacement in place alike:
    // header, key and value, and the segment's latest deadline widened to the entry's.
    private static void WriteEntry(byte* entry, CacheSegment segment, ReadOnlySpan<byte> key, in ReadOnlySequence<byte> sequenceValue, ReadOnlySpan<byte> spanValue, bool fromSequence, long valueLength, uint hash, ushort tag, in CacheExpiry expiry, int hits, long slack)
    {
        CacheEntry.WriteHeader(entry, key.Length, (int)valueLength, hash, tag, expiry, hits, slack);
        byte* keyAt = CacheEntry.Key(entry);
        key.CopyTo(new Span<byte>(keyAt, key.Length));
        Span<byte> value = new(keyAt + key.Length, (int)valueLength);
        if (fromSequence)
        {
            sequenceValue.CopyTo(value);
        }
        else
        {
            spanValue.CopyTo(value);
        }

        if (expiry.Expires)
        {
            segment.MaxDeadline = Math.Max(segment.MaxDeadline, expiry.DeadlineMs);
        }
    }

    // Whether a write of `size` bytes may go over the entry in `slot`: its segment is pinned by no lease
    // (the lock is held, so none can start), it is as big (the slack left fits its 15 bits), and the new
    // value belongs in the same log (neither expires, or both go to the same TTL log). A big entry's own
    // segment takes only a value that still needs one, or it would hold a small value in a big block.
    private bool CanReplaceInPlace(int slot, byte* current, long size, in CacheExpiry expiry, long nowMs, out CacheSegment segment)
    {
        segment = SegmentAt(slot);
        long room = CacheEntry.Size(current);
        if (size > room || room - size > CacheEntry.MaxSlackBytes || segment.Pins != 0)
        {
            return false;
        }

        if (segment.IsLarge && size <= _generation.SegmentBytes)
        {
            return false;
        }

        return expiry.Expires ? CacheEntry.Expires(current) && segment.Log == TtlLogOf(expiry, nowMs) : !CacheEntry.Expires(current);
    }

    private static int TtlLogOf(in CacheExpiry expiry, long nowMs)
    {
        long ttl = expiry.SlidingMs > 0 ? expiry.SlidingMs : expiry.DeadlineMs - nowMs;
        long seconds = Math.Max(1, ttl / 1000);
        return FirstTtlLog + Math.Min(TtlLogCount - 1, BitOperations.Log2((ulong)seconds));
    }

    // Room for an entry of `size` bytes at the head of `log`, or in a segment of its own; null if other shards must give room first.
    private byte* Append(long size, int log, out CacheSegment segment)
    {
        if (size > _generation.SegmentBytes)
        {
            CacheSegment? large = ObtainLarge(size);
            if (large is null)
            {
                segment = null!;
                return null;
            }

            segment = large;
            segment.Used = (int)size;
            AddToLog(segment, log);
            return segment.Pointer;
        }

        CacheSegment? head = _heads[log];
        if (head is null || head.Used + size > head.Capacity)
        {
            CacheSegment? obtained = ObtainStandard();
            if (obtained is null)
            {
                segment = null!;
                return null;
            }

            // A reclaim while obtaining may have copied entries forward into a new head of this very
            // log. That head is filled first: made to give way, it would sit in its log nearly empty
            // until its turn to be reclaimed, budget that holds no entry.
            head = _heads[log];
            if (head is not null && head.Used + size <= head.Capacity)
            {
                GiveBackUnused(obtained);
            }
            else
            {
                head = obtained;
                AddToLog(head, log);
                _heads[log] = head;
            }
        }

        byte* entry = head.Pointer + head.Used;
        head.Used += (int)size;
        segment = head;
        return entry;
    }

    private void AddToLog(CacheSegment segment, int log)
    {
        segment.Log = log;
        segment.Sequence = ++_sequence;
        (_logs[log] ??= new Queue<CacheSegment>()).Enqueue(segment);
        _logBytes[log] += segment.HeldBytes;
    }

    // A standard segment, numbered: a spare (keeping one for copying entries forward), a new one
    // within the budget, one reclaimed here, or room freed in another shard; null if the others could not give it.
    private CacheSegment? ObtainStandard()
    {
        int barren = 0;
        while (true)
        {
            if (_free.Count > 1 || (_free.Count == 1 && !HasReclaimable))
            {
                CacheSegment spare = _free.Pop();
                if (TryNumber(spare))
                {
                    return spare;
                }

                _free.Push(spare);
            }
            else if (HasFreeNumber && _generation.TryAllocateSegment(_generation.SegmentBytes, large: false) is { } fresh)
            {
                _ = TryNumber(fresh);
                _segmentBytes += fresh.HeldBytes;
                if (_free.Count == 0 && _generation.Budget.Allocated > _generation.Budget.Limit / 2 &&
                    _generation.TryAllocateSegment(_generation.SegmentBytes, large: false) is { } reserve)
                {
                    // The spare that entries moving forward go to once the budget is full (reclaims
                    // refill it): taken while there is room, but only past half the budget, so a cache
                    // far from full does not hold a spare per shard.
                    _free.Push(reserve);
                    _segmentBytes += reserve.HeldBytes;
                }

                return fresh;
            }

            if (ReclaimOne(barren >= 2, out bool freed))
            {
                barren = freed ? 0 : barren + 1;
                continue;
            }

            if (!NativeCache.FreeRoomElsewhere(this, _generation.Shards))
            {
                RoomNeeded = _generation.SegmentBytes;
                return null;
            }
        }
    }

    private CacheSegment? ObtainLarge(long size)
    {
        // Bytes pinned by leases on retired segments no eviction can free: a segment that cannot fit
        // beside them is refused before anything is evicted, so the key keeps its old value.
        if (_generation.UsableSize(size) > _generation.Budget.Limit - _generation.Budget.Pinned)
        {
            NativeCache.ThrowNoRoom(size, _generation.Budget);
        }

        int barren = 0;
        while (true)
        {
            if (HasFreeNumber && _generation.TryAllocateSegment((int)size, large: true) is { } fresh)
            {
                _ = TryNumber(fresh);
                _segmentBytes += fresh.HeldBytes;
                return fresh;
            }

            if (!FreeSomething(ref barren))
            {
                RoomNeeded = size;
                return null;
            }
        }
    }

    // One step towards more room in the budget; false when nothing more can be done anywhere.
    private bool FreeSomething(ref int barren)
    {
        if (_free.Count > 0)
        {
            FreeSpare();
            return true;
        }

        if (ReclaimOne(barren >= 2, out bool freed))
        {
            barren = freed ? 0 : barren + 1;
            return true;
        }

        return NativeCache.FreeRoomElsewhere(this, _generation.Shards);
    }

    /// <summary>
    /// For a write in another shard: gives memory back to the budget (a spare segment, or one
    /// reclaimed here); false if this shard has nothing to give.
    /// </summary>
    internal bool GiveBack()
    {
        if (_count == 0 && !HasReclaimable && _free.Count == 0 && _slots != null)
        {
            // An empty shard's tables are all it holds: they go too, and come back with its next write.
            FreeTables();
            return true;
        }

        for (int attempt = 0; attempt < 4; attempt++)
        {
            if (_free.Count > 0)
            {
                FreeSpare();
                return true;
            }

            if (!ReclaimOne(attempt >= 2, out _))
            {
                return false;
            }
        }

        if (_free.Count > 0)
        {
            FreeSpare();
            return true;
        }

        return false;
    }

    private void FreeSpare()
    {
        CacheSegment spare = _free.Pop();
        _segmentBytes -= spare.HeldBytes;
        _generation.FreeSegment(spare);
    }

    private bool HasReclaimable
    {
        get
        {
            foreach (Queue<CacheSegment>? queue in _logs)
            {
                if (queue is { Count: > 0 })
                {
                    return true;
                }
            }

            return false;
        }
    }

    private bool HasFreeNumber => _freeIds.Count > 0 || _nextId <= ushort.MaxValue;

    // A standard segment obtained, numbered, but not written or put in a log: a spare again. The
    // shard keeps at most FreeSegmentsKept spares, and ObtainStandard leaves at most one when it
    // returns, so this one always fits among them.
    private void GiveBackUnused(CacheSegment segment)
    {
        Unnumber(segment);
        _free.Push(segment);
    }

    // TryNumber's inverse: the segment's number is free for another.
    private void Unnumber(CacheSegment segment)
    {
        _segments[segment.Id] = null;
        _freeIds.Push(segment.Id);
        segment.Id = 0;
    }

    private bool TryNumber(CacheSegment segment)
    {
        ushort id;
        if (_freeIds.Count > 0)
        {
            id = _freeIds.Pop();
        }
        else if (_nextId <= ushort.MaxValue)
        {
            id = (ushort)_nextId++;
            if (id >= _segments.Length)
            {
                Array.Resize(ref _segments, Math.Min(ushort.MaxValue + 1, _segments.Length * 2));
            }
        }
        else
        {
            return false;
        }

        segment.Id = id;
        _segments[id] = segment;
        return true;
    }

    // ---------------------------------------------------------------- the generation's end

    /// <summary>
    /// Retires every segment (the shard is closed): those no lease pins are added to
    /// <paramref name="unpinned"/>, the others counted as outstanding in <paramref name="generation"/>.
    /// </summary>
    internal void RetireAll(CacheGeneration generation, List<CacheSegment> unpinned)
    {
        foreach (CacheSegment? segment in _segments)
        {
            if (segment is not null)
            {
                generation.RetireAtDrop(segment, unpinned);
            }
        }

        foreach (CacheSegment segment in _free)
        {
            unpinned.Add(segment);
        }

        _free.Clear();
    }

    /// <summary>Frees the index and ghost tables (the shard is closed, or empty).</summary>
    internal void FreeTables()
    {
        if (_slots != null)
        {
            _generation.FreeBlock(_indexBlock, _indexHeld);
            _generation.FreeBlock(_ghostBlock, _ghostHeld);
            _slots = null;
            _ghost = null;
        }
    }
}
