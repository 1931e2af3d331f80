using System.Runtime.InteropServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Records;

namespace jemalloc;

/// <content>
/// The batch paths of the index: lookups of many keys and bulk loads, a chunk at a time, each chunk
/// in groups of keys whose home slots are fetched from memory together, so their cache misses overlap
/// instead of following one another.
/// </content>
public sealed unsafe partial class NativeHashIndex<TKey>
{
    // Chunks of a batch lookup: each is read from one state of the index, and only a chunk a write
    // overlapped is read again, halved each time, so a batch finishes under any rate of writes.
    private const int MaxChunk = 1024;

    /// <summary>
    /// Looks up every key of <paramref name="keys"/>, a chunk at a time under one lease of the table:
    /// for a request that looks up many keys, the lease, the version check and the memory fences are
    /// paid once per chunk instead of once per key, and the table slots of a group of keys are fetched
    /// from memory at the same time. Safe on any number of threads while one thread writes: each chunk
    /// is read from one state of the index (a write in between makes that chunk read again), so each
    /// value is its key's value at one moment of the call, and a batch of any size finishes while a
    /// writer writes. Each key is read once from <paramref name="keys"/> per attempt at its chunk.
    /// </summary>
    /// <param name="keys">The keys to look up.</param>
    /// <param name="values">Receives the value of each key at the same position, or -1 for a key the index does not hold.</param>
    /// <returns>How many of the keys are present.</returns>
    /// <exception cref="ArgumentException"><paramref name="values"/> is shorter than <paramref name="keys"/>, or the two overlap in memory.</exception>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public int TryGetValues(ReadOnlySpan<TKey> keys, Span<long> values)
    {
        if (values.Length < keys.Length)
        {
            ThrowHelper.ThrowArgument(nameof(values), $"The values span ({values.Length}) must be at least as long as the keys ({keys.Length}).");
        }

        // A chunk may be looked up again after a write: values written over keys would change the keys asked for.
        if (MemoryMarshal.AsBytes(keys).Overlaps(MemoryMarshal.AsBytes((ReadOnlySpan<long>)values[..keys.Length])))
        {
            ThrowHelper.ThrowArgument(nameof(values), "The values span overlaps the keys: give the results their own memory.");
        }

        if (!KeysRunUserCode)
        {
            return LookUp(keys, values);
        }

        ReentrancyGuard.Enter(this, TypeName);
        try
        {
            return LookUp(keys, values);
        }
        finally
        {
            ReentrancyGuard.Exit();
        }
    }

    private int LookUp(ReadOnlySpan<TKey> keys, Span<long> values)
    {
        if (keys.IsEmpty)
        {
            _ = LiveTable();
            return 0;
        }

        var spin = default(SpinWait);
        int chunk = MaxChunk;
        int start = 0;
        int found = 0;
        while (start < keys.Length)
        {
            HashIndexTable<TKey> table = CurrentTable();
            if (!TryLease(table, out LedgerBlock.LeaseScope lease))
            {
                spin.SpinOnce();
                continue;
            }

            int count = Math.Min(chunk, keys.Length - start);
            int hits = -1;
            using (lease)
            {
                long version = Volatile.Read(ref _version);
                if ((version & 1) == 0)
                {
                    hits = FindMany(table, keys.Slice(start, count), values.Slice(start, count));
                    // The reads above must complete before the version is read again.
                    Interlocked.MemoryBarrier();
                    if (Volatile.Read(ref _version) != version)
                    {
                        hits = -1;
                    }
                }
            }

            if (hits >= 0)
            {
                found += hits;
                start += count;
                chunk = Math.Min(MaxChunk, chunk * 2);
            }
            else
            {
                chunk = Math.Max(1, chunk / 2);
                spin.SpinOnce();
            }
        }

        return found;
    }

    /// <summary>
    /// Adds each key of <paramref name="keys"/> with the value at the same position of
    /// <paramref name="values"/>, a chunk at a time: for a bulk load (building a table), the writer's
    /// checks, the lease and the version change are paid once per chunk instead of once per key, the
    /// table grows at most once per chunk, and the slots of a group of keys are fetched from memory
    /// at the same time instead of one miss after another. Readers see each chunk added whole or not
    /// at all (they wait while one is being added, as for any write).
    /// </summary>
    /// <remarks>
    /// The keys are added in order. If one cannot be (it is already present, or appears earlier in
    /// <paramref name="keys"/>; its value is negative; its type's Equals throws), the call throws and the
    /// keys before it stay added. A key's GetHashCode runs up to one group of 16 keys ahead of its
    /// placing (to fetch its slot early), so if it throws, the keys of the group before its own may not
    /// be added yet. Either way the index is consistent and holds a prefix of <paramref name="keys"/>.
    /// Each key and value is read once from the caller's spans.
    /// </remarks>
    /// <exception cref="ArgumentException"><paramref name="values"/> is not as long as <paramref name="keys"/>, or a key is already present (those before it were added).</exception>
    /// <exception cref="ArgumentOutOfRangeException">A value is negative (the keys before it were added).</exception>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    /// <exception cref="OutOfMemoryException">The table cannot grow.</exception>
    public void AddRange(ReadOnlySpan<TKey> keys, ReadOnlySpan<long> values)
    {
        if (values.Length != keys.Length)
        {
            ThrowHelper.ThrowArgument(nameof(values), $"The values ({values.Length}) must be as many as the keys ({keys.Length}).");
        }

        BeginUserWrite();
        HashIndexTable<TKey>? table = null;
        try
        {
            table = LeaseForWrite();
            for (int start = 0; start < keys.Length; start += MaxChunk)
            {
                int count = Math.Min(MaxChunk, keys.Length - start);
                while (!table.HasRoomFor(_count + count))
                {
                    table = Grow(table);
                }

                AddChunk(table, keys.Slice(start, count), values.Slice(start, count));
            }
        }
        finally
        {
            EndWrite(table);
            ExitUserCode();
        }
    }

    // The lookups of a batch, in groups whose home slots are prefetched first: the cache misses of a
    // group overlap instead of following one another.
    // Each key is read once from the caller's span (another thread may change it): the key hashed is
    // the key compared.
    private static int FindMany(HashIndexTable<TKey> table, ReadOnlySpan<TKey> keys, Span<long> values)
    {
        const int Group = 16;
        HashIndexEntry<TKey>* entries = table.Entries;
        Span<ulong> hashes = stackalloc ulong[Group];
        Span<TKey> group = stackalloc TKey[Group];
        int found = 0;
        for (int start = 0; start < keys.Length; start += Group)
        {
            int count = Math.Min(Group, keys.Length - start);
            PrefetchGroup(table, keys, start, group, hashes);

            for (int i = 0; i < count; i++)
            {
                if (table.Find(group[i], hashes[i], out long slot))
                {
                    values[start + i] = entries[slot].ValuePlusOne - 1;
                    found++;
                }
                else
                {
                    values[start + i] = -1;
                }
            }
        }

        return found;
    }

    // One chunk of AddRange as one write (the table has room for every key of it), in groups: the home
    // slots of the next group are prefetched before the keys of this one are placed, so the memory
    // is kept busy with a group's misses while the last group's keys go in. The count is published in
    // the finally, so a key that throws leaves the index holding exactly the keys written before it.
    private void AddChunk(HashIndexTable<TKey> table, ReadOnlySpan<TKey> keys, ReadOnlySpan<long> values)
    {
        const int Group = 16;
        HashIndexEntry<TKey>* entries = table.Entries;
        // Two groups, this one and the next: each key read once from the caller's span, and hashed once.
        Span<ulong> hashes = stackalloc ulong[2 * Group];
        Span<TKey> group = stackalloc TKey[2 * Group];
        long count = _count;
        BeginChange();
        try
        {
            PrefetchGroup(table, keys, 0, group[..Group], hashes[..Group]);
            for (int start = 0, half = 0; start < keys.Length; start += Group, half ^= Group)
            {
                PrefetchGroup(table, keys, start + Group, group.Slice(half ^ Group, Group), hashes.Slice(half ^ Group, Group));
                int size = Math.Min(Group, keys.Length - start);
                for (int i = 0; i < size; i++)
                {
                    long value = values[start + i];
                    if (value < 0)
                    {
                        ThrowHelper.ThrowArgumentOutOfRange(nameof(values), value, "Index values are non-negative (e.g. row numbers).");
                    }

                    TKey key = group[half + i];
                    if (table.Find(key, hashes[half + i], out long slot))
                    {
                        ThrowHelper.ThrowArgument(nameof(keys), $"The key {key} is already in the index.");
                    }

                    entries[slot].Key = key;
                    entries[slot].ValuePlusOne = value + 1;
                    count++;
                }
            }
        }
        finally
        {
            Volatile.Write(ref _count, count);
            EndChange();
        }
    }

    // Reads the keys of one group (up to group.Length from start) once each, hashes them and asks for
    // their home slots, so a group's cache misses overlap: shared by the batch lookup and AddRange.
    private static void PrefetchGroup(HashIndexTable<TKey> table, ReadOnlySpan<TKey> keys, int start, Span<TKey> group, Span<ulong> hashes)
    {
        int size = Math.Min(group.Length, keys.Length - start);
        for (int i = 0; i < size; i++)
        {
            TKey key = keys[start + i];
            group[i] = key;
            ulong hash = HashIndexTable<TKey>.Hash(key);
            hashes[i] = hash;
            CachePrefetch.Line(table.Entries + HashIndexTable<TKey>.Home(hash, table.Length));
        }
    }
}
