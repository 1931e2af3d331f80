using System.Numerics;

namespace jemalloc.Caching;

// Eviction (S3-FIFO over segments, size-aware) and the expiry sweep of the TTL logs.
internal sealed unsafe partial class CacheShard
{
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
        Queue<CacheSegment> queue = _logs[log]!;
        CacheSegment segment = queue.Dequeue();
        _logBytes[log] -= segment.HeldBytes;
        if (_heads[log] == segment)
        {
            _heads[log] = null;
        }

        Version++;
        bool anyLeft = false;
        long now = nowMs;
        if (segment.IsLarge && !sweeping && !force && KeepsLarge(segment))
        {
            // Its one entry stays: the segment itself moves to the main log's tail, no copy.
            byte* only = segment.Pointer;
            CacheEntry.SetHits(only, log == SmallLog ? 0 : CacheEntry.Hits(only) - 1);
            AddToLog(segment, log == SmallLog ? MainLog : log);
            return false;
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
                    Drop(slot, entry);
                    _counters.Expired++;
                    anyLeft = true;
                    continue;
                }
            }

            int hits = CacheEntry.Hits(entry);
            bool keep = sweeping || (!force && hits >= HitsNeeded(size));
            if (keep)
            {
                int destination = log == SmallLog ? MainLog : log;
                int newHits = sweeping ? hits : log == SmallLog ? 0 : hits - 1;
                if (CopyForward(entry, size, slot, destination, newHits))
                {
                    continue;
                }
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
        _segments[segment.Id] = null;
        _freeIds.Push(segment.Id);
        segment.Id = 0;
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

    private bool CopyForward(byte* entry, long size, int slot, int log, int hits)
    {
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
        CacheEntry.SetHits(destination, hits);
        if (CacheEntry.Expires(destination))
        {
            head.MaxDeadline = Math.Max(head.MaxDeadline, CacheEntry.Deadline(destination));
        }

        _slots[slot] = Pack(CacheEntry.Tag(entry), head.Id, (int)(destination - head.Pointer));
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
