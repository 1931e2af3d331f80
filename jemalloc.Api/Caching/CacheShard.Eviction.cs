using System.Numerics;

namespace jemalloc.Caching;

// Eviction (S3-FIFO over segments, size-aware) and the expiry sweep of the TTL logs.
internal sealed unsafe partial class CacheShard
{
    // A segment is compacted once a quarter of it is dead: moving its live entries costs at most three
    // bytes copied per byte given back, and the dead share of the cache stays near a quarter at worst.
    private const int CompactDeadShare = 4;

    // ---------------------------------------------------------------- eviction

    /// <summary>
    /// Reclaims this shard's oldest segment by S3-FIFO (or the TTL log that expires first when
    /// neither FIFO log has one): entries that earned it move forward, the rest leave.
    /// </summary>
    /// <param name="force">Evict every entry whatever its hits (after reclaims that freed nothing).</param>
    /// <param name="freed">Whether the reclaim made progress: an entry left, or entries left the small log.</param>
    /// <returns>False if the shard has no segment to reclaim.</returns>
    private bool ReclaimOne(bool force, out bool freed)
    {
        if (!force && TryCompact())
        {
            freed = true;
            return true;
        }

        int log = ChooseLog();
        if (log < 0)
        {
            freed = false;
            return false;
        }

        // Moving entries out of the small log is progress even when none leaves: their hits start
        // again at zero in the main log, whose next reclaim evicts them unless read meanwhile.
        freed = Reclaim(log, force, sweeping: false, nowMs: long.MinValue) || log == SmallLog;
        return true;
    }

    private int ChooseLog()
    {
        Queue<CacheSegment>? small = _logs[SmallLog];
        bool hasSmall = small is { Count: > 0 };
        if (hasSmall && _logBytes[SmallLog] * 10 > _segmentBytes)
        {
            return SmallLog;
        }

        // The main log and the TTL logs are one FIFO: the oldest segment among them.
        int oldest = -1;
        long oldestSequence = long.MaxValue;
        for (int log = MainLog; log < _logs.Length; log++)
        {
            if (_logs[log] is { Count: > 0 } queue && queue.Peek().Sequence < oldestSequence)
            {
                oldest = log;
                oldestSequence = queue.Peek().Sequence;
            }
        }

        return oldest >= 0 ? oldest : hasSmall ? SmallLog : -1;
    }

    // Reclaims the oldest segment of `log`; whether any entry left.
    private bool Reclaim(int log, bool force, bool sweeping, long nowMs)
    {
        CacheSegment segment = _logs[log]!.Dequeue();
        return ReclaimSegment(segment, log, force, sweeping, compacting: false, nowMs);
    }

    /// <summary>
    /// Reclaims, when enough of the shard's bytes are dead, the segment with the most dead bytes that no
    /// lease pins, without evicting: its live entries move to the head of its own log with their hits
    /// (they leave their place in the FIFO for the head's), and the segment is free again.
    /// </summary>
    /// <returns>Whether a segment was reclaimed so; false if none has enough dead bytes, or its live entries have nowhere sure to go.</returns>
    private bool TryCompact()
    {
        int threshold = _generation.SegmentBytes / CompactDeadShare;
        if (_deadBytes < threshold)
        {
            return false;
        }

        CacheSegment? best = null;
        for (int id = 1; id < _nextId && id < _segments.Length; id++)
        {
            CacheSegment? segment = _segments[id];
            if (segment is null || segment.DeadBytes <= (best?.DeadBytes ?? 0) || segment.Pins != 0 ||
                segment.DeadBytes * CompactDeadShare < segment.Capacity)
            {
                continue;
            }

            // A big entry's own segment is worth reclaiming only once its entry is dead: a live one cannot move.
            if (segment.IsLarge && !CacheEntry.IsDead(segment.Pointer))
            {
                continue;
            }

            best = segment;
        }

        if (best is null)
        {
            return false;
        }

        // The live entries (slack left out: a copy drops it) must have somewhere sure to go, or
        // compacting would evict them: a spare segment, or room at the head of their log.
        int log = best.Log;
        long live = best.Used - best.DeadBytes;
        CacheSegment? head = _heads[log];
        bool room = live <= 0 || _free.Count > 0 || (head is not null && head != best && head.Capacity - head.Used >= live);
        if (!room)
        {
            return false;
        }

        RemoveFromLog(best, log);
        _ = ReclaimSegment(best, log, force: false, sweeping: false, compacting: true, nowMs: long.MinValue);
        return true;
    }

    // Takes a segment out of the middle of its log's queue (no allocation: the queue is rotated once).
    private void RemoveFromLog(CacheSegment segment, int log)
    {
        Queue<CacheSegment> queue = _logs[log]!;
        for (int i = queue.Count; i > 0; i--)
        {
            CacheSegment next = queue.Dequeue();
            if (next != segment)
            {
                queue.Enqueue(next);
            }
        }
    }

    // Reclaims `segment`, already out of `log`'s queue; whether any entry left.
    private bool ReclaimSegment(CacheSegment segment, int log, bool force, bool sweeping, bool compacting, long nowMs)
    {
        _logBytes[log] -= segment.HeldBytes;
        if (_heads[log] == segment)
        {
            _heads[log] = null;
        }

        Version++;
        bool anyLeft = false;
        long now = nowMs;
        if (segment.IsLarge && !sweeping && !compacting && !force && KeepsLarge(segment))
        {
            // Its one entry stays: the segment itself moves to the main log's tail, no copy.
            byte* only = segment.Pointer;
            CacheEntry.SetHits(only, log == SmallLog ? 0 : CacheEntry.Hits(only) - 1);
            AddToLog(segment, log == SmallLog ? MainLog : log);
            return false;
        }

        _counters.DeadBytesReclaimed += segment.DeadBytes;
        if (compacting)
        {
            _counters.SegmentsCompacted++;
        }

        long offset = 0;
        while (offset < segment.Used)
        {
            byte* entry = segment.Pointer + offset;
            long size = CacheEntry.Size(entry);
            offset += size;
            if (CacheEntry.IsDead(entry))
            {
                continue;
            }

            uint hash = CacheEntry.Hash(entry);
            int slot = SlotOf(segment.Id, (int)(entry - segment.Pointer), hash);
            if (CacheEntry.Expires(entry))
            {
                if (now == long.MinValue)
                {
                    now = _cache.NowMs();
                }

                if (CacheEntry.Deadline(entry) <= now)
                {
                    if (entry == _replacing)
                    {
                        // Expired: no old value left to keep.
                        _replacing = null;
                    }

                    Drop(slot, entry);
                    _counters.Expired++;
                    anyLeft = true;
                    continue;
                }
            }

            int hits = CacheEntry.Hits(entry);
            // Moved once at most: moving it on each reclaim could go round forever.
            bool replacing = entry == _replacing;
            bool keepReplaced = replacing && !_replacingMoved;
            bool keep = keepReplaced || sweeping || compacting || (!force && hits >= HitsNeeded(size));
            if (keep)
            {
                int destination = compacting || log != SmallLog ? log : MainLog;
                int newHits = keepReplaced || sweeping || compacting ? hits : log == SmallLog ? 0 : hits - 1;
                if (CopyForward(entry, size, slot, destination, newHits))
                {
                    if (replacing)
                    {
                        _replacing = EntryOf(_slots[slot], out _);
                        // A compaction's move is no reclaim of it, and does not count.
                        _replacingMoved |= !compacting && !sweeping;
                    }

                    continue;
                }
            }

            if (replacing)
            {
                // It could not move (again): it leaves, but comes back if the write it makes room for fails.
                Displace(slot, entry, destination: log == SmallLog ? MainLog : log);
                anyLeft = true;
                continue;
            }

            if (log == SmallLog)
            {
                AddGhost(hash, CacheEntry.Tag(entry));
            }

            Drop(slot, entry);
            _counters.Evicted++;
            anyLeft = true;
        }

        ReleaseSegment(segment);
        return anyLeft;
    }

    private bool KeepsLarge(CacheSegment segment)
    {
        byte* only = segment.Pointer;
        if (CacheEntry.IsDead(only))
        {
            return false;
        }

        if (CacheEntry.Expires(only) && CacheEntry.Deadline(only) <= _cache.NowMs())
        {
            return false;
        }

        return CacheEntry.Hits(only) >= HitsNeeded(CacheEntry.Size(only));
    }

    // A reclaimed segment leaves the shard: a spare if no lease pins it (or freed past the spares
    // kept), otherwise the last lease frees it.
    private void ReleaseSegment(CacheSegment segment)
    {
        _deadBytes -= segment.DeadBytes;
        Unnumber(segment);
        _segmentBytes -= segment.HeldBytes;
        if (!_generation.TryRetire(segment))
        {
            return;
        }

        if (!segment.IsLarge && _free.Count < FreeSegmentsKept)
        {
            segment.Recycle();
            _free.Push(segment);
            _segmentBytes += segment.HeldBytes;
        }
        else
        {
            _generation.FreeSegment(segment);
        }
    }

    // Size-aware: an entry bigger than the mean needs more hits to move or stay.
    private int HitsNeeded(long size)
    {
        if (_count <= 0 || _entryBytes <= 0)
        {
            return 1;
        }

        long mean = Math.Max(8, _entryBytes / _count);
        if (size <= mean)
        {
            return 1;
        }

        return 1 + Math.Min(2, BitOperations.Log2((ulong)(size / mean)));
    }

    private bool CopyForward(byte* entry, long sizeWithSlack, int slot, int log, int hits)
    {
        // The copy leaves the slack behind.
        long size = CacheEntry.CompactSize(entry);
        if (size > _generation.SegmentBytes)
        {
            return false;
        }

        CacheSegment? head = _heads[log];
        if (head is null || head.Used + size > head.Capacity)
        {
            head = null;
            if (_free.Count > 0)
            {
                CacheSegment spare = _free.Pop();
                if (TryNumber(spare))
                {
                    head = spare;
                }
                else
                {
                    _free.Push(spare);
                }
            }
            else if (HasFreeNumber && _generation.TryAllocateSegment(_generation.SegmentBytes, large: false) is { } fresh)
            {
                _ = TryNumber(fresh);
                _segmentBytes += fresh.HeldBytes;
                head = fresh;
            }

            if (head is null)
            {
                return false;
            }

            AddToLog(head, log);
            _heads[log] = head;
        }

        byte* destination = head.Pointer + head.Used;
        Buffer.MemoryCopy(entry, destination, size, size);
        head.Used += (int)size;
        CacheEntry.ClearSlack(destination);
        _entryBytes -= sizeWithSlack - size;
        CacheEntry.SetHits(destination, hits);
        if (CacheEntry.Expires(destination))
        {
            head.MaxDeadline = Math.Max(head.MaxDeadline, CacheEntry.Deadline(destination));
        }

        _slots[slot] = Pack(CacheEntry.Tag(entry), head.Id, (int)(destination - head.Pointer), destination);
        return true;
    }

    // ---------------------------------------------------------------- expiry

    /// <summary>
    /// Reclaims the TTL logs' segments whose every deadline has passed, oldest first per log: only
    /// their entries are visited; a sliding entry read since moves forward.
    /// </summary>
    internal void Sweep(long nowMs)
    {
        for (int log = FirstTtlLog; log < _logs.Length; log++)
        {
            if (_logs[log] is { Count: > 0 } first && first.Peek().MaxDeadline <= nowMs)
            {
                // Entries that move forward go to a new head, not into a segment this sweep is about to visit.
                _heads[log] = null;
            }

            while (_logs[log] is { Count: > 0 } queue && queue.Peek().MaxDeadline <= nowMs)
            {
                _ = Reclaim(log, force: false, sweeping: true, nowMs);
            }
        }

        // What the sweep reclaimed goes back to the allocator rather than waiting as spares.
        while (_free.Count > 0)
        {
            FreeSpare();
        }
    }

    /// <summary>The open leases on the shard's segments.</summary>
    internal int Pins
    {
        get
        {
            int pins = 0;
            foreach (CacheSegment? segment in _segments)
            {
                pins += segment?.Pins ?? 0;
            }

            return pins;
        }
    }

    /// <summary>Whether any entry that expires is in the shard.</summary>
    internal bool HasExpiring
    {
        get
        {
            for (int log = FirstTtlLog; log < _logs.Length; log++)
            {
                if (_logs[log] is { Count: > 0 })
                {
                    return true;
                }
            }

            return false;
        }
    }
}
