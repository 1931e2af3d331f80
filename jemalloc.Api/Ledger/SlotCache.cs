using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace jemalloc.Ledger;

/// <summary>
/// One thread's free ledger slots, so that creating and freeing a structure take and give back a
/// slot with no atomic instruction: the shared store of <see cref="SlotTable"/> is touched once
/// per <see cref="Batch"/> slots. A thread's cache dies with the thread (it is only referenced from
/// the thread's static), and its finalizer gives the slots it held back to the shared store, so
/// threads that start, allocate and exit do not strand slots.
/// </summary>
/// <remarks>
/// The count and the slots, written on every create and free, live in one array between two
/// untouched margins. A compacting GC moves the caches of all threads next to each other; without
/// the margins, one thread's count or slots could share a cache line with another's, and their
/// creates and frees would pull the line back and forth between the cores.
/// </remarks>
internal sealed class SlotCache
{
    /// <summary>
    /// How many slots move between a cache and the shared store at once. New slots come in runs of
    /// this many, starting at a multiple of it, so a run's 64-byte records fill two whole 4 KiB pages:
    /// two threads that take new slots never write records in the same page. Within a page the CPU's
    /// prefetchers pull in lines next to the ones a thread uses, and a line another core then writes
    /// has to be fetched back.
    /// </summary>
    internal const int Batch = 128;

    /// <summary>The most slots a cache holds: a full cache gives a batch back before it takes one more.</summary>
    internal const int Capacity = 4 * Batch;

    /// <summary>Elements left unwritten at each end of the array: two cache lines, since CPUs fetch lines in adjacent pairs.</summary>
    internal const int Margin = 128 / sizeof(int);

    private const int CountIndex = Margin;
    private const int FirstSlot = CountIndex + 1;

    // [margin | count | Capacity slots | margin]
    private readonly int[] _state = new int[FirstSlot + Capacity + Margin];

    /// <summary>Gives the slots of an exited thread back to the shared store.</summary>
    ~SlotCache()
    {
        int count = _state[CountIndex];
        if (count > 0)
        {
            SlotTable.GiveBack(_state.AsSpan(FirstSlot, count));
            _state[CountIndex] = 0;
        }
    }

    /// <summary>
    /// The array holding the count and the slots, which the thread's static keeps beside the cache so
    /// that a create and a free reach it with one load less (see <see cref="TryPop(int[], out int)"/>).
    /// </summary>
    internal int[] Slots => _state;

    /// <summary>Takes a slot; <see langword="false"/> when the cache is empty.</summary>
    internal bool TryPop(out int slot) => TryPop(_state, out slot);

    /// <summary>Keeps a free slot; <see langword="false"/> when the cache is full.</summary>
    internal bool TryPush(int slot) => TryPush(_state, slot);

    /// <summary>Takes a slot from a cache's <see cref="Slots"/>; <see langword="false"/> when it is empty.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryPop(int[] slots, out int slot)
    {
        ref int count = ref CountOf(slots);
        int top = count - 1;
        if ((uint)top < Capacity)
        {
            slot = Unsafe.Add(ref count, 1 + top);
            count = top;
            return true;
        }

        slot = 0;
        return false;
    }

    /// <summary>Keeps a free slot in a cache's <see cref="Slots"/>; <see langword="false"/> when it is full.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryPush(int[] slots, int slot)
    {
        ref int count = ref CountOf(slots);
        int top = count;
        if ((uint)top < Capacity)
        {
            Unsafe.Add(ref count, 1 + top) = slot;
            count = top + 1;
            return true;
        }

        return false;
    }

    /// <summary>Takes up to a batch of slots from the shared store, or new ones from the table; <see langword="false"/> if neither had any.</summary>
    internal bool Refill()
    {
        int count = _state[CountIndex];
        Span<int> room = _state.AsSpan(FirstSlot + count, Batch);
        int taken = SlotTable.TakeShared(room);
        if (taken == 0)
        {
            taken = SlotTable.TakeNew(room);
        }

        _state[CountIndex] = count + taken;
        return taken > 0;
    }

    /// <summary>Gives the oldest batch of a full cache back to the shared store.</summary>
    internal void Drain()
    {
        int count = _state[CountIndex];
        Span<int> slots = _state.AsSpan(FirstSlot, count);
        SlotTable.GiveBack(slots[..Batch]);
        slots[Batch..].CopyTo(slots);
        _state[CountIndex] = count - Batch;
    }

    // Only a cache's own array is passed here, made once with room for the count and Capacity slots,
    // so every index TryPop and TryPush reach after their range check lies inside it.
    private static ref int CountOf(int[] slots) => ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(slots), CountIndex);
}
