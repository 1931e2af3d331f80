using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;
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
public sealed unsafe partial class NativeHashIndex<TKey> : IDisposable, IWriterGuarded
    where TKey : unmanaged, IEquatable<TKey>
{
    /// <summary>The smallest table.</summary>
    public const long MinCapacity = 16;

    private const string TypeName = "NativeHashIndex";

    // Null: the table asks HugePagePolicy at each size, as an array created without options does.
    private readonly AllocationOptions? _options;
    // The current table: replaced by a grown one, null once disposed.
    private HashIndexTable<TKey>? _table;
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
        _table = new HashIndexTable<TKey>(HashIndexTable<TKey>.CapacityFor(expectedCount), options);
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
        HashIndexTable<TKey>? table = null;
        long[]? rented = null;
        try
        {
            table = LeaseForWrite();
            if (!table.Find(key, HashIndexTable<TKey>.Hash(key), out long hole))
            {
                return false;
            }

            // A key type's GetHashCode is user code: the homes of the keys the removal may move are
            // all computed before anything moves, so one that throws leaves the index as it was.
            Span<long> homes = default;
            if (KeysRunUserCode)
            {
                int run = checked((int)table.RunAfter(hole));
                rented = ArrayPool<long>.Shared.Rent(run);
                homes = rented.AsSpan(0, run);
                table.HomesAfter(hole, homes);
            }

            BeginChange();
            try
            {
                table.RemoveAt(hole, homes);
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
        HashIndexTable<TKey>? table = null;
        try
        {
            // Leased as every write is: a reset of the table's arena is then reported as the index's.
            table = LeaseForWrite();
            BeginChange();
            try
            {
                table.Clear();
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
            HashIndexTable<TKey> table = _table!;
            Volatile.Write(ref _disposed, true);
            Volatile.Write(ref _table, null);
            table.Free();
        }
        finally
        {
            EndWrite();
        }
    }

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

    private bool Put(TKey key, long value, bool replace)
    {
        if (value < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "Index values are non-negative (e.g. row numbers).");
        }

        BeginUserWrite();
        HashIndexTable<TKey>? table = null;
        try
        {
            ulong hash = HashIndexTable<TKey>.Hash(key);
            table = LeaseForWrite();
            if (table.Find(key, hash, out long slot))
            {
                if (replace)
                {
                    BeginChange();
                    table.Entries[slot].ValuePlusOne = value + 1;
                    EndChange();
                }

                return false;
            }

            if (!table.HasRoomFor(_count + 1))
            {
                // The key is not in the grown table either: its slot is the end of its probe run,
                // found without calling its Equals (which could throw after the growth).
                table = Grow(table);
                slot = table.EmptySlot(hash);
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

    // Swaps in the doubled table, built while readers still use the old one, then frees the old.
    // The caller holds the writer's lease on old; on return it holds one on the new table instead.
    private HashIndexTable<TKey> Grow(HashIndexTable<TKey> old)
    {
        HashIndexTable<TKey> grown = old.Doubled(_options, TypeName);
        BeginChange();
        Volatile.Write(ref _table, grown);
        EndChange();
        old.Block.EndLease();
        old.Free();
        return grown;
    }

    private HashIndexTable<TKey> CurrentTable()
    {
        HashIndexTable<TKey>? table = Volatile.Read(ref _table);
        if (table is null)
        {
            ThrowHelper.ThrowDisposed(TypeName);
        }

        return table;
    }

    // The current table, checked live: a table freed while it is still current was freed by an arena
    // reset (a growth swaps the new table in before it frees the old one, Dispose clears it first).
    private HashIndexTable<TKey> LiveTable()
    {
        while (true)
        {
            HashIndexTable<TKey> table = CurrentTable();
            if (table.IsLive)
            {
                return table;
            }

            if (Volatile.Read(ref _table) == table)
            {
                ThrowHelper.ThrowWentWithArena(TypeName);
            }
        }
    }

    // A reader's lease on table, for one lookup or one chunk of a batch, ended by the caller's using.
    private bool TryLease(HashIndexTable<TKey> table, out LedgerBlock.LeaseScope lease)
    {
        try
        {
            lease = table.Block.Lease(TypeName);
            return true;
        }
        catch (ObjectDisposedException) when (!IsDisposed && Volatile.Read(ref _table) != table)
        {
            // The writer grew the index and freed this table: read the new one. (A table still
            // current but freed was freed by an arena reset: the index is gone, the exception stands.)
            lease = default;
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
    // Begun and ended apart, not a scope: a growth moves it to the new table (Grow), and the write
    // ends it on whichever table it ends with (EndWrite).
    private HashIndexTable<TKey> LeaseForWrite()
    {
        HashIndexTable<TKey> table = _table!;
        table.Block.BeginLease(TypeName);
        return table;
    }

    private void EndWrite(HashIndexTable<TKey>? leased)
    {
        if (leased is not null)
        {
            leased.Block.EndLease();
        }

        EndWrite();
    }

    private void BeginChange() => Interlocked.Increment(ref _version);

    private void EndChange() => Interlocked.Increment(ref _version);
}
