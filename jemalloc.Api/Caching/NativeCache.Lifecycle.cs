using jemalloc.Caching;
using jemalloc.Internal;

namespace jemalloc;

// Clear, Dispose and the statistics.
public sealed partial class NativeCache
{
    // Clears begun, and those whose old generation's drop is done (the budget then holds none of its unpinned memory).
    private long _clearsStarted;
    private long _dropsDone;
    // ---------------------------------------------------------------- Clear, Dispose, statistics

    private void ClearCore()
    {
        CacheGeneration old;
        lock (_lifecycle)
        {
            ThrowIfDisposed();
            // Made first: if it cannot be, nothing changed.
            CacheGeneration next = new(this, _budget, _shardCount, _segmentBytes, _hugePages, _arenaGone);
            old = _generation;
            // Before the shards close: a write they refuse from now on retries (SetCore).
            _ = Interlocked.Increment(ref _clearsStarted);
            CloseShards(old);
            lock (_pendingGate)
            {
                _pending.Add(old);
            }

            Volatile.Write(ref _generation, next);
        }

        try
        {
            old.Drop();
        }
        finally
        {
            _ = Interlocked.Increment(ref _dropsDone);
        }
    }

    // Closes a generation's shards, one lock at a time: operations that find one closed wait for the
    // lifecycle lock, which the caller holds until the new generation is in place.
    private void CloseShards(CacheGeneration generation)
    {
        foreach (CacheShard shard in generation.Shards)
        {
            lock (shard.Gate)
            {
                shard.Closed = true;
                _pastCounters.Add(shard.Counters);
                _cleared += shard.Count;
            }
        }
    }

    private void ArenaGone(CacheGeneration generation)
    {
        lock (_pendingGate)
        {
            _ = _pending.Remove(generation);
        }
    }

    private void DisposeCore()
    {
        CacheGeneration generation;
        lock (_lifecycle)
        {
            if (_disposed)
            {
                return;
            }

            generation = _generation;
            CacheShard[] shards = generation.Shards;
            int entered = 0;
            try
            {
                for (; entered < shards.Length; entered++)
                {
                    shards[entered].Gate.Enter();
                }

                long leases = generation.RetiredPins;
                foreach (CacheShard shard in shards)
                {
                    leases += shard.Pins;
                }

                lock (_pendingGate)
                {
                    foreach (CacheGeneration pending in _pending)
                    {
                        leases += pending.RetiredPins;
                    }
                }

                if (leases > 0)
                {
                    ThrowHelper.ThrowInvalidOperation($"The cache has {leases:N0} open lease(s) (NativeCacheLease); dispose them before the cache. Nothing was freed.");
                }

                foreach (CacheShard shard in shards)
                {
                    shard.Closed = true;
                    _pastCounters.Add(shard.Counters);
                }

                _disposed = true;
            }
            finally
            {
                for (int i = entered - 1; i >= 0; i--)
                {
                    shards[i].Gate.Exit();
                }
            }
        }

        _timer?.Dispose();
        generation.Drop();
    }

    private void ThrowIfDisposed()
    {
        if (_disposed)
        {
            ThrowHelper.ThrowDisposed(TypeName);
        }
    }

    private NativeCacheStatistics GetStatisticsCore()
    {
        CacheCounters counters;
        long entries = 0;
        long keyValueBytes = 0;
        long deadBytes = 0;
        long cleared;
        CacheGeneration generation;
        CacheGeneration[] pending;
        lock (_lifecycle)
        {
            ThrowIfDisposed();
            generation = _generation;
            counters = _pastCounters;
            cleared = _cleared;
            foreach (CacheShard shard in generation.Shards)
            {
                lock (shard.Gate)
                {
                    counters.Add(shard.Counters);
                    entries += shard.Count;
                    keyValueBytes += shard.KeyValueBytes;
                    deadBytes += shard.DeadBytes;
                }
            }

            // Taken with the generation, so one cleared meanwhile is not counted twice.
            lock (_pendingGate)
            {
                pending = [.. _pending];
            }
        }

        // Outside the lifecycle lock (statistics flush thread caches); each generation reads its
        // arena under its own lock, so one dropped meanwhile counts 0 rather than failing.
        long arenaBytes = generation.ArenaAllocatedBytes();
        foreach (CacheGeneration old in pending)
        {
            arenaBytes += old.ArenaAllocatedBytes();
        }

        return new NativeCacheStatistics
        {
            Hits = counters.Hits,
            Misses = counters.Misses,
            Writes = counters.Writes,
            EvictedForCapacity = counters.Evicted,
            Expired = counters.Expired,
            Removed = counters.Removed,
            Replaced = counters.Replaced,
            ReplacedInPlace = counters.ReplacedInPlace,
            SegmentsCompacted = counters.SegmentsCompacted,
            DeadBytesReclaimed = counters.DeadBytesReclaimed,
            DeadBytes = deadBytes,
            Cleared = cleared,
            Entries = entries,
            KeyValueBytes = keyValueBytes,
            AllocatedBytes = _budget.Allocated,
            ArenaAllocatedBytes = arenaBytes,
            PinnedBytes = _budget.Pinned,
            BudgetBytes = _budget.Limit,
        };
    }
}
