namespace jemalloc.Ledger;

/// <summary>
/// One thread's free ledger slots, so that creating and freeing a structure take and give back a
/// slot with no atomic instruction: the shared store of <see cref="SlotTable"/> is touched once
/// per <see cref="Batch"/> slots. A thread's cache dies with the thread (it is only referenced from
/// the thread's static), and its finalizer gives the slots it held back to the shared store, so
/// threads that start, allocate and exit do not strand slots.
/// </summary>
internal sealed class SlotCache
{
    /// <summary>How many slots move between a cache and the shared store at once.</summary>
    internal const int Batch = 32;

    /// <summary>The most slots a cache holds: a full cache gives a batch back before it takes one more.</summary>
    internal const int Capacity = 2 * Batch;

    private readonly int[] _slots = new int[Capacity];
    private int _count;

    /// <summary>Gives the slots of an exited thread back to the shared store.</summary>
    ~SlotCache()
    {
        if (_count > 0)
        {
            SlotTable.GiveBack(_slots.AsSpan(0, _count));
            _count = 0;
        }
    }

    /// <summary>Takes a slot; <see langword="false"/> when the cache is empty.</summary>
    internal bool TryPop(out int slot)
    {
        int count = _count - 1;
        int[] slots = _slots;
        if ((uint)count < (uint)slots.Length)
        {
            slot = slots[count];
            _count = count;
            return true;
        }

        slot = 0;
        return false;
    }

    /// <summary>Keeps a free slot; <see langword="false"/> when the cache is full.</summary>
    internal bool TryPush(int slot)
    {
        int count = _count;
        int[] slots = _slots;
        if ((uint)count < (uint)slots.Length)
        {
            slots[count] = slot;
            _count = count + 1;
            return true;
        }

        return false;
    }

    /// <summary>Takes up to a batch of slots from the shared store, or new ones from the table; <see langword="false"/> if neither had any.</summary>
    internal bool Refill()
    {
        int taken = SlotTable.TakeShared(_slots.AsSpan(_count, Batch));
        if (taken == 0)
        {
            taken = SlotTable.TakeNew(_slots.AsSpan(_count, Batch));
        }

        _count += taken;
        return taken > 0;
    }

    /// <summary>Gives the oldest batch of a full cache back to the shared store.</summary>
    internal void Drain()
    {
        SlotTable.GiveBack(_slots.AsSpan(0, Batch));
        _slots.AsSpan(Batch, _count - Batch).CopyTo(_slots);
        _count -= Batch;
    }
}
