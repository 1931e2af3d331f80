using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc.Records;

/// <summary>
/// One table of a <see cref="NativeHashIndex{TKey}"/>: its slots in one <see cref="HugeArray{T}"/>,
/// where a key lives in them (its hash, its home slot, linear probing), how full it may get, the
/// rehash into a doubled table, and its end once no reader is in it. The index swaps a grown table in
/// and decides who leases which table when.
/// </summary>
/// <typeparam name="TKey">The index's key type.</typeparam>
internal sealed unsafe class HashIndexTable<TKey>
    where TKey : unmanaged, IEquatable<TKey>
{
    /// <summary>The slots, at the array's address: read and written only under a lease of <see cref="Block"/>.</summary>
    internal readonly HashIndexEntry<TKey>* Entries;

    /// <summary>How many slots there are.</summary>
    internal readonly long Length;

    private readonly HugeArray<HashIndexEntry<TKey>> _array;

    /// <summary>An empty table of <paramref name="length"/> slots.</summary>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    internal HashIndexTable(long length, AllocationOptions? options)
    {
        _array = options is { } given ? new HugeArray<HashIndexEntry<TKey>>(length, given) : new HugeArray<HashIndexEntry<TKey>>(length);
        Entries = (HashIndexEntry<TKey>*)_array.Pointer;
        Length = length;
    }

    /// <summary>The ledger block of the slots, which readers and the writer lease.</summary>
    internal LedgerBlock Block => _array.Block;

    /// <summary>Whether the slots are still allocated: not freed, nor invalidated by an arena reset.</summary>
    internal bool IsLive => _array.IsValid;

    /// <summary>
    /// Just enough slots for <paramref name="count"/> keys at three quarters full: any size, not a power
    /// of two (a table of 10M keys takes 13.3M slots, not 16.8M), since a slot is found by range reduction.
    /// </summary>
    internal static long CapacityFor(long count) =>
        Math.Max(NativeHashIndex<TKey>.MinCapacity, (count / 3 * 4) + (count % 3 == 0 ? 0 : 4));

    /// <summary>Whether <paramref name="count"/> keys fit without passing three quarters full.</summary>
    internal bool HasRoomFor(long count) => count <= Length / 4 * 3;

    /// <summary>
    /// The slot a hash starts probing at: the high word of hash * length, in [0, length) for any
    /// length, without a division (Lemire's range reduction).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long Home(ulong hash, long length) => (long)Math.BigMul(hash, (ulong)length, out _);

    /// <summary>The slot after <paramref name="slot"/>, round to the first.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long Next(long slot, long length) => slot + 1 == length ? 0 : slot + 1;

    /// <summary>
    /// The key's hash: its bits for the runtime's integers, its own <see cref="object.GetHashCode"/>
    /// (user code, which may throw) for any other type, spread by MurmurHash3's finalizer.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong Hash(TKey key)
    {
        ulong h;
        if (typeof(TKey) == typeof(long) || typeof(TKey) == typeof(ulong))
        {
            h = Unsafe.As<TKey, ulong>(ref key);
        }
        else if (typeof(TKey) == typeof(int) || typeof(TKey) == typeof(uint))
        {
            h = Unsafe.As<TKey, uint>(ref key);
        }
        else
        {
            h = (uint)key.GetHashCode();
        }

        // MurmurHash3's finalizer: sequential ids spread over the whole table.
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDUL;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53UL;
        h ^= h >> 33;
        return h;
    }

    /// <summary>
    /// The slot holding <paramref name="key"/>, or (not found) the empty slot that ends its probe run.
    /// The table is never more than three quarters full, so every run ends; the bound only guards torn
    /// reads, which the caller's version check then discards.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool Find(TKey key, ulong hash, out long slot)
    {
        HashIndexEntry<TKey>* entries = Entries;
        long length = Length;
        long i = Home(hash, length);
        for (long probes = 0; probes < length; probes++)
        {
            ref HashIndexEntry<TKey> entry = ref entries[i];
            if (entry.ValuePlusOne == 0)
            {
                slot = i;
                return false;
            }

            if (entry.Key.Equals(key))
            {
                slot = i;
                return true;
            }

            i = Next(i, length);
        }

        slot = i;
        return false;
    }

    /// <summary>The empty slot that ends the probe run of <paramref name="hash"/>: where a key known to be absent goes.</summary>
    internal long EmptySlot(ulong hash)
    {
        HashIndexEntry<TKey>* entries = Entries;
        long length = Length;
        long i = Home(hash, length);
        while (entries[i].ValuePlusOne != 0)
        {
            i = Next(i, length);
        }

        return i;
    }

    /// <summary>How many keys follow <paramref name="hole"/> in its probe run (up to the next empty slot).</summary>
    internal long RunAfter(long hole)
    {
        HashIndexEntry<TKey>* entries = Entries;
        long length = Length;
        long run = 0;
        for (long next = Next(hole, length); entries[next].ValuePlusOne != 0; next = Next(next, length))
        {
            run++;
        }

        return run;
    }

    /// <summary>The home slots of the keys that follow <paramref name="hole"/>, one per element of <paramref name="homes"/> (<see cref="RunAfter"/> of them).</summary>
    internal void HomesAfter(long hole, Span<long> homes)
    {
        HashIndexEntry<TKey>* entries = Entries;
        long length = Length;
        long slot = hole;
        for (int r = 0; r < homes.Length; r++)
        {
            slot = Next(slot, length);
            homes[r] = Home(Hash(entries[slot].Key), length);
        }
    }

    /// <summary>
    /// Empties the slot <paramref name="hole"/> by backward shift, leaving no tombstone: each following
    /// key of the probe run moves into the hole unless its home slot lies cyclically after the hole
    /// (then it must stay where lookups find it). <paramref name="homes"/> holds the run's homes
    /// (<see cref="HomesAfter"/>) when the key type's GetHashCode is user code, or is empty, and each
    /// is computed as the shift reaches its key.
    /// </summary>
    internal void RemoveAt(long hole, ReadOnlySpan<long> homes)
    {
        HashIndexEntry<TKey>* entries = Entries;
        long length = Length;
        long next = hole;
        for (int r = 0; ; r++)
        {
            next = Next(next, length);
            if (entries[next].ValuePlusOne == 0)
            {
                break;
            }

            // The keys not yet reached have not moved, so each home computed before is still its key's.
            long home = homes.IsEmpty ? Home(Hash(entries[next].Key), length) : homes[r];
            bool stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
            if (!stays)
            {
                entries[hole] = entries[next];
                hole = next;
            }
        }

        entries[hole] = default;
    }

    /// <summary>Empties every slot (the writer's, under its lease).</summary>
    internal void Clear() => _array.Fill(default);

    /// <summary>
    /// A table of twice the slots holding every key of this one, built while readers still use this
    /// one. It is returned under a lease for <paramref name="ownerName"/>, begun here and ended by the
    /// caller, the writer, whose lease it carries from this table to the new one.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The table cannot grow; this one is unchanged.</exception>
    /// <exception cref="ObjectDisposedException">An arena reset freed the new table already.</exception>
    internal HashIndexTable<TKey> Doubled(AllocationOptions? options, string ownerName)
    {
        if (Length > long.MaxValue / 2 / sizeof(HashIndexEntry<TKey>))
        {
            ThrowHelper.ThrowOutOfMemory("The index cannot grow any further.");
        }

        var grown = new HashIndexTable<TKey>(Length * 2, options);
        try
        {
            // A key type's GetHashCode may throw: the new table is freed, the old one stays.
            HashIndexEntry<TKey>* from = Entries;
            HashIndexEntry<TKey>* to = grown.Entries;
            long length = grown.Length;
            for (long i = 0; i < Length; i++)
            {
                if (from[i].ValuePlusOne != 0)
                {
                    long j = Home(Hash(from[i].Key), length);
                    while (to[j].ValuePlusOne != 0)
                    {
                        j = Next(j, length);
                    }

                    to[j] = from[i];
                }
            }

            grown.Block.BeginLease(ownerName);
        }
        catch
        {
            grown._array.Dispose();
            throw;
        }

        return grown;
    }

    /// <summary>
    /// Frees the slots once no reader is in them: readers lease a table only for one lookup (or one
    /// chunk of a batch), so this waits them out. The table must no longer be the index's current one.
    /// </summary>
    internal void Free()
    {
        var spin = default(SpinWait);
        while (true)
        {
            try
            {
                // Throws InvalidOperationException while a reader holds a lease on the array.
                _array.Dispose();
                return;
            }
            catch (InvalidOperationException)
            {
                spin.SpinOnce();
            }
        }
    }
}
