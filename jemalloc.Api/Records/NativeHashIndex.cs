using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Internal;
using jemalloc.Records;

namespace jemalloc;

/// <summary>
/// A hash index from an unmanaged key (e.g. a record id) to a non-negative <see cref="long"/> value
/// (e.g. a row number), kept in native memory: open addressing with linear probing in one
/// <see cref="HugeArray{T}"/>, so an index of millions of keys is one ledger entry and nothing for the
/// garbage collector to trace.
/// </summary>
/// <typeparam name="TKey">The key type: an unmanaged struct with value equality (<see cref="long"/>, <see cref="int"/>, <see cref="Guid"/>, ...).</typeparam>
/// <remarks>
/// <para>
/// A table sized for an expected count has just the slots to hold it three quarters full (any size:
/// slots are found by range reduction, not a power-of-two mask); it doubles when it is three quarters
/// full. <see cref="Remove"/> shifts the following keys
/// back instead of leaving tombstones, so lookups never slow down with churn.
/// </para>
/// <para>
/// Threads: one writer (<see cref="Add"/>, <see cref="Set"/>, <see cref="Remove"/>, <see cref="Clear"/>,
/// <see cref="Dispose"/>) and any number of concurrent readers (<see cref="TryGetValue"/>,
/// <see cref="ContainsKey"/>, the indexer's getter, <see cref="TryGetValues"/>). A reader always
/// sees the index as it was before or after each write, never a half-done one: it leases the table
/// (so growth or <see cref="Dispose"/> cannot free it under the reader) and reads again if a write
/// ran meanwhile; a batch does so chunk by chunk, so it finishes under any rate of writes. Two
/// threads writing at once is a bug the index detects: the second throws <see cref="InvalidOperationException"/>.
/// A reader may wait briefly while a write is in progress.
/// </para>
/// <para>
/// A key type's own <see cref="IEquatable{T}.Equals(T)"/> and <see cref="object.GetHashCode"/> run
/// inside the index's operations. If one of them throws, the operation throws it and leaves the index
/// as it was. If one of them calls back into the same index (a lookup, a write, <see cref="Dispose"/>),
/// that call throws <see cref="InvalidOperationException"/>: it cannot wait for the operation it is in.
/// </para>
/// </remarks>
public sealed unsafe class NativeHashIndex<TKey> : IDisposable, IWriterGuarded
    where TKey : unmanaged, IEquatable<TKey>
{
    /// <summary>The smallest table.</summary>
    public const long MinCapacity = 16;

    private const string TypeName = "NativeHashIndex";

    // Chunks of a batch lookup: each is read from one state of the index, and only a chunk a write
    // overlapped is read again, halved each time, so a batch finishes under any rate of writes.
    private const int MaxChunk = 1024;

    // Null: the table asks HugePagePolicy at each size, as an array created without options does.
    private readonly AllocationOptions? _options;
    private Table? _table;
    private long _count;
    // Odd while a write changes the table: readers retry until they see the same even number before and after.
    private long _version;
    private SingleWriterGuard _writer;
    private bool _disposed;

    /// <summary>An empty index; its table takes huge pages from <see cref="HugePagePolicy.ThresholdBytes"/> on, as an array created without options does.</summary>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public NativeHashIndex()
        : this(0, null)
    {
    }

    /// <summary>An empty index with room for <paramref name="expectedCount"/> keys before it grows.</summary>
    /// <param name="expectedCount">How many keys it should hold without growing; 0 or more.</param>
    /// <param name="options">Arena, alignment and huge-page choices for the table.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="expectedCount"/> is negative or too large.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public NativeHashIndex(long expectedCount, AllocationOptions options)
        : this(expectedCount, (AllocationOptions?)options)
    {
    }

    private NativeHashIndex(long expectedCount, AllocationOptions? options)
    {
        if (expectedCount is < 0 or > long.MaxValue / 64)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(expectedCount), expectedCount, "The expected count must be from 0 to long.MaxValue / 64.");
        }

        _options = options;
        _table = new Table(CapacityFor(expectedCount), options);
    }

    /// <summary>How many keys the index holds.</summary>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    public long Count
    {
        get
        {
            _ = LiveTable();
            return Volatile.Read(ref _count);
        }
    }

    /// <summary>How many slots the table has (it grows past three quarters full).</summary>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    public long Capacity => LiveTable().Length;

    /// <summary>The native bytes of the table.</summary>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    public long TableBytes => LiveTable().Length * sizeof(HashIndexEntry<TKey>);

    /// <summary>Whether the index was disposed. A reset of the arena its table is in does not dispose it (its members then throw <see cref="ObjectDisposedException"/>; <see cref="Dispose"/> still works).</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed);

    /// <summary>The value of <paramref name="key"/>; setting it adds or replaces the key (<see cref="Set"/>).</summary>
    /// <exception cref="KeyNotFoundException">Getting a key the index does not hold.</exception>
    /// <exception cref="ArgumentOutOfRangeException">Setting a negative value.</exception>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Setting while another thread writes.</exception>
    public long this[TKey key]
    {
        get
        {
            if (!TryGetValue(key, out long value))
            {
                throw new KeyNotFoundException($"The key {key} is not in the index.");
            }

            return value;
        }

        set => Set(key, value);
    }

    /// <summary>Looks <paramref name="key"/> up; safe on any number of threads while one thread writes.</summary>
    /// <returns>Whether the key is present; <paramref name="value"/> is its value, or 0.</returns>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public bool TryGetValue(TKey key, out long value)
    {
        // A batch of one: the lease, the version check and the retry live in TryGetValues alone.
        Span<long> values = stackalloc long[1];
        bool found = TryGetValues(new ReadOnlySpan<TKey>(in key), values) == 1;
        value = found ? values[0] : 0;
        return found;
    }

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
            Table table = CurrentTable();
            if (!TryLease(table))
            {
                spin.SpinOnce();
                continue;
            }

            int count = Math.Min(chunk, keys.Length - start);
            int hits = -1;
            try
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
            finally
            {
                AllocationLedger.ExitLease(table.Array.Handle);
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

    /// <summary>Whether the index holds <paramref name="key"/>.</summary>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public bool ContainsKey(TKey key) => TryGetValue(key, out _);

    /// <summary>Adds <paramref name="key"/> with <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentException">The key is already present.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="value"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    /// <exception cref="OutOfMemoryException">The table cannot grow.</exception>
    public void Add(TKey key, long value)
    {
        if (!Put(key, value, replace: false))
        {
            ThrowHelper.ThrowArgument(nameof(key), $"The key {key} is already in the index.");
        }
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
        Table? table = null;
        try
        {
            table = LeaseForWrite();
            for (int start = 0; start < keys.Length; start += MaxChunk)
            {
                int count = Math.Min(MaxChunk, keys.Length - start);
                while (_count + count > table.Length / 4 * 3)
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

    /// <summary>Adds <paramref name="key"/> or replaces its value.</summary>
    /// <returns><see langword="true"/> if the key was added, <see langword="false"/> if its value was replaced.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="value"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    /// <exception cref="OutOfMemoryException">The table cannot grow.</exception>
    public bool Set(TKey key, long value) => Put(key, value, replace: true);

    /// <summary>Removes <paramref name="key"/>.</summary>
    /// <returns>Whether it was present.</returns>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public bool Remove(TKey key)
    {
        BeginUserWrite();
        Table? table = null;
        long[]? rented = null;
        try
        {
            table = LeaseForWrite();
            if (!Find(table, key, Hash(key), out long hole))
            {
                return false;
            }

            // Backward shift: move each following key of the probe run into the hole unless its
            // home slot lies cyclically after the hole (then it must stay where lookups find it).
            // A key type's GetHashCode is user code: the homes are all computed before anything
            // moves, so one that throws leaves the index as it was.
            HashIndexEntry<TKey>* entries = table.Entries;
            long length = table.Length;
            Span<long> homes = default;
            if (KeysRunUserCode)
            {
                long run = 0;
                for (long next = Next(hole, length); entries[next].ValuePlusOne != 0; next = Next(next, length))
                {
                    run++;
                }

                rented = ArrayPool<long>.Shared.Rent(checked((int)run));
                homes = rented;
                long slot = hole;
                for (long r = 0; r < run; r++)
                {
                    slot = Next(slot, length);
                    homes[(int)r] = Home(Hash(entries[slot].Key), length);
                }
            }

            BeginChange();
            try
            {
                long next = hole;
                for (int r = 0; ; r++)
                {
                    next = Next(next, length);
                    if (entries[next].ValuePlusOne == 0)
                    {
                        break;
                    }

                    // The keys not yet reached have not moved, so each home computed above is still its key's.
                    long home = KeysRunUserCode ? homes[r] : Home(Hash(entries[next].Key), length);
                    bool stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
                    if (!stays)
                    {
                        entries[hole] = entries[next];
                        hole = next;
                    }
                }

                entries[hole] = default;
                Volatile.Write(ref _count, _count - 1);
            }
            finally
            {
                EndChange();
            }

            return true;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<long>.Shared.Return(rented);
            }

            EndWrite(table);
            ExitUserCode();
        }
    }

    /// <summary>Removes every key (the table keeps its size).</summary>
    /// <exception cref="ObjectDisposedException">The index was disposed, or the arena its table is in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public void Clear()
    {
        ThrowIfReentrant();
        BeginWrite();
        Table? table = null;
        try
        {
            // Leased as every write is: a reset of the table's arena is then reported as the index's.
            table = LeaseForWrite();
            BeginChange();
            try
            {
                table.Array.Fill(default);
                Volatile.Write(ref _count, 0);
            }
            finally
            {
                EndChange();
            }
        }
        finally
        {
            EndWrite(table);
        }
    }

    /// <summary>Frees the table, once no reader is in it. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">Another thread is writing, or called from inside a key's Equals or GetHashCode that this index is running.</exception>
    public void Dispose()
    {
        if (IsDisposed)
        {
            return;
        }

        ThrowIfReentrant();
        BeginWrite();
        try
        {
            Table table = _table!;
            Volatile.Write(ref _disposed, true);
            Volatile.Write(ref _table, null);
            Retire(table);
        }
        finally
        {
            EndWrite();
        }
    }

    // Just enough slots for count keys at three quarters full: any size, not a power of two (a
    // table of 10M keys takes 13.3M slots, not 16.8M), since a slot is found by range reduction.
    private static long CapacityFor(long count) => Math.Max(MinCapacity, (count / 3 * 4) + (count % 3 == 0 ? 0 : 4));

    // The slot a hash starts probing at: the high word of hash * length, in [0, length) for any
    // length, without a division (Lemire's range reduction).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static long Home(ulong hash, long length) => (long)Math.BigMul(hash, (ulong)length, out _);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static long Next(long slot, long length) => slot + 1 == length ? 0 : slot + 1;

    // Whether TKey's Equals and GetHashCode may be user code; false for the runtime's own key types,
    // which then skip the reentrancy bookkeeping (the JIT removes the branch).
    private static bool KeysRunUserCode
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => !(typeof(TKey) == typeof(long) || typeof(TKey) == typeof(ulong) || typeof(TKey) == typeof(int) ||
                 typeof(TKey) == typeof(uint) || typeof(TKey) == typeof(short) || typeof(TKey) == typeof(ushort) ||
                 typeof(TKey) == typeof(byte) || typeof(TKey) == typeof(sbyte) || typeof(TKey) == typeof(char) ||
                 typeof(TKey) == typeof(nint) || typeof(TKey) == typeof(nuint) || typeof(TKey) == typeof(Guid));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Hash(TKey key)
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

    // The slot holding key, or (not found) the empty slot that ends its probe run. The table is
    // never more than three quarters full, so every run ends; the bound only guards torn reads,
    // which the caller's version check then discards.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Find(Table table, TKey key, ulong hash, out long slot)
    {
        HashIndexEntry<TKey>* entries = table.Entries;
        long length = table.Length;
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

    // The empty slot that ends the probe run of hash: where a key known to be absent goes.
    private static long EmptySlot(Table table, ulong hash)
    {
        HashIndexEntry<TKey>* entries = table.Entries;
        long length = table.Length;
        long i = Home(hash, length);
        while (entries[i].ValuePlusOne != 0)
        {
            i = Next(i, length);
        }

        return i;
    }

    // The lookups of a batch, in groups whose home slots are prefetched first: the cache misses of a
    // group overlap instead of following one another.
    // Each key is read once from the caller's span (another thread may change it): the key hashed is
    // the key compared.
    private static int FindMany(Table table, ReadOnlySpan<TKey> keys, Span<long> values)
    {
        const int Group = 16;
        HashIndexEntry<TKey>* entries = table.Entries;
        long length = table.Length;
        Span<ulong> hashes = stackalloc ulong[Group];
        Span<TKey> group = stackalloc TKey[Group];
        int found = 0;
        for (int start = 0; start < keys.Length; start += Group)
        {
            int count = Math.Min(Group, keys.Length - start);
            PrefetchGroup(table, keys, start, group, hashes);

            for (int i = 0; i < count; i++)
            {
                if (Find(table, group[i], hashes[i], out long slot))
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
    private void AddChunk(Table table, ReadOnlySpan<TKey> keys, ReadOnlySpan<long> values)
    {
        const int Group = 16;
        HashIndexEntry<TKey>* entries = table.Entries;
        long length = table.Length;
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
                    if (Find(table, key, hashes[half + i], out long slot))
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
    private static void PrefetchGroup(Table table, ReadOnlySpan<TKey> keys, int start, Span<TKey> group, Span<ulong> hashes)
    {
        int size = Math.Min(group.Length, keys.Length - start);
        for (int i = 0; i < size; i++)
        {
            TKey key = keys[start + i];
            group[i] = key;
            ulong hash = Hash(key);
            hashes[i] = hash;
            CachePrefetch.Line(table.Entries + Home(hash, table.Length));
        }
    }

    private static void Retire(Table table)
    {
        // Readers hold a lease only for one lookup: wait them out, then free the table.
        var spin = default(SpinWait);
        while (true)
        {
            try
            {
                table.Dispose();
                return;
            }
            catch (InvalidOperationException)
            {
                spin.SpinOnce();
            }
        }
    }

    private bool Put(TKey key, long value, bool replace)
    {
        if (value < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "Index values are non-negative (e.g. row numbers).");
        }

        BeginUserWrite();
        Table? table = null;
        try
        {
            ulong hash = Hash(key);
            table = LeaseForWrite();
            if (Find(table, key, hash, out long slot))
            {
                if (replace)
                {
                    BeginChange();
                    table.Entries[slot].ValuePlusOne = value + 1;
                    EndChange();
                }

                return false;
            }

            if (_count + 1 > table.Length / 4 * 3)
            {
                // The key is not in the grown table either: its slot is the end of its probe run,
                // found without calling its Equals (which could throw after the growth).
                table = Grow(table);
                slot = EmptySlot(table, hash);
            }

            BeginChange();
            table.Entries[slot].Key = key;
            table.Entries[slot].ValuePlusOne = value + 1;
            Volatile.Write(ref _count, _count + 1);
            EndChange();
            return true;
        }
        finally
        {
            EndWrite(table);
            ExitUserCode();
        }
    }

    // Builds the doubled table while readers still use the old one, swaps it in, then frees the old.
    // The caller holds a write lease on old; on return it holds one on the new table instead.
    private Table Grow(Table old)
    {
        if (old.Length > long.MaxValue / 2 / sizeof(HashIndexEntry<TKey>))
        {
            ThrowHelper.ThrowOutOfMemory("The index cannot grow any further.");
        }

        var grown = new Table(old.Length * 2, _options);
        try
        {
            // A key type's GetHashCode may throw: the new table is freed, the old one stays.
            HashIndexEntry<TKey>* from = old.Entries;
            HashIndexEntry<TKey>* to = grown.Entries;
            long length = grown.Length;
            for (long i = 0; i < old.Length; i++)
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

            // The writer's lease moves to the new table, so the old one can be freed.
            AllocationLedger.EnterLease(grown.Array.Handle, TypeName);
        }
        catch
        {
            grown.Dispose();
            throw;
        }

        BeginChange();
        Volatile.Write(ref _table, grown);
        EndChange();
        AllocationLedger.ExitLease(old.Array.Handle);
        Retire(old);
        return grown;
    }

    private Table CurrentTable()
    {
        Table? table = Volatile.Read(ref _table);
        if (table is null)
        {
            ThrowHelper.ThrowObjectDisposed(TypeName);
        }

        return table;
    }

    // The current table, checked live: a table freed while it is still current was freed by an arena
    // reset (a growth swaps the new table in before it frees the old one, Dispose clears it first).
    private Table LiveTable()
    {
        while (true)
        {
            Table table = CurrentTable();
            if (table.Array.IsValid)
            {
                return table;
            }

            if (Volatile.Read(ref _table) == table)
            {
                ThrowHelper.ThrowWentWithArena(TypeName);
            }
        }
    }

    private bool TryLease(Table table)
    {
        try
        {
            AllocationLedger.EnterLease(table.Array.Handle, TypeName);
            return true;
        }
        catch (ObjectDisposedException) when (!IsDisposed && Volatile.Read(ref _table) != table)
        {
            // The writer grew the index and freed this table: read the new one. (A table still
            // current but freed was freed by an arena reset: the index is gone, the exception stands.)
            return false;
        }
    }

    private void BeginWrite() => _writer.Enter(this, TypeName);

    // Around a write that calls the key type's methods: refuses a call back from them (see ReentrancyGuard).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnterUserCode()
    {
        if (KeysRunUserCode)
        {
            ReentrancyGuard.Enter(this, TypeName);
        }
    }

    // EnterUserCode, then BeginWrite; a refused writer (another thread writes, or the index was
    // disposed) leaves no trace, or this thread's next call would be taken for a reentrant one.
    private void BeginUserWrite()
    {
        EnterUserCode();
        try
        {
            BeginWrite();
        }
        catch
        {
            ExitUserCode();
            throw;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void ExitUserCode()
    {
        if (KeysRunUserCode)
        {
            ReentrancyGuard.Exit();
        }
    }

    private void ThrowIfReentrant()
    {
        if (KeysRunUserCode)
        {
            ReentrancyGuard.ThrowIfInside(this, TypeName);
        }
    }

    private void EndWrite() => _writer.Exit();

    // The writer reads and writes the table through its pointer: a lease keeps an arena reset from
    // freeing it meanwhile (the reset throws), and throws ObjectDisposedException if one already did.
    private Table LeaseForWrite()
    {
        Table table = _table!;
        AllocationLedger.EnterLease(table.Array.Handle, TypeName);
        return table;
    }

    private void EndWrite(Table? leased)
    {
        if (leased is not null)
        {
            AllocationLedger.ExitLease(leased.Array.Handle);
        }

        EndWrite();
    }

    private void BeginChange() => Interlocked.Increment(ref _version);

    private void EndChange() => Interlocked.Increment(ref _version);

    private sealed class Table : IDisposable
    {
        public readonly HugeArray<HashIndexEntry<TKey>> Array;
        public readonly HashIndexEntry<TKey>* Entries;
        public readonly long Length;

        public Table(long length, AllocationOptions? options)
        {
            Array = options is { } given ? new HugeArray<HashIndexEntry<TKey>>(length, given) : new HugeArray<HashIndexEntry<TKey>>(length);
            Entries = (HashIndexEntry<TKey>*)Array.Pointer;
            Length = length;
        }

        // Throws InvalidOperationException while a reader holds a lease on the array.
        public void Dispose() => Array.Dispose();
    }
}
