using System.Collections.Concurrent;
using jemalloc.Ledger;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// Free ledger slots move between the threads' caches and the shared store as batches. The failure
/// that matters is a slot handed to two live allocations at once, or one lost for good: many threads
/// create and free structures, free some that other threads made, and exit with slots in their
/// caches, while every live structure's slot is recorded and its contents checked before its free.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class SlotStoreStressTests : LeakCheckedTest
{
    private const int Rounds = 12;
    private const int ThreadsPerRound = 4;
    private const int OperationsPerThread = 3_000;
    private const int HeldPerThread = 48;
    private const int Length = 4;

    [Fact]
    public void No_slot_is_handed_to_two_live_structures_and_none_is_lost_while_threads_come_and_go()
    {
        // Checked mode's quarantine holds freed slots back, which the bound on the table's growth
        // below does not allow for: run with it off, and restore it.
        bool wasChecked = AllocationLedger.CheckedMode;
        AllocationLedger.CheckedMode = false;
        try
        {
            Run();
        }
        finally
        {
            AllocationLedger.CheckedMode = wasChecked;
        }
    }

    private static void Run()
    {
        CollectAndFinalize();
        int handedOutBefore = SlotTable.HandedOut;
        var live = new LiveSlots();
        var handedOver = new ConcurrentQueue<Marked>();
        var stale = new ConcurrentQueue<AllocationHandle>();
        int nextMark = 0;
        long freedOwn = 0;
        long freedOthers = 0;
        int exitedEarly = 0;
        int ran = 0;

        for (int round = 0; round < Rounds; round++)
        {
            int roundNumber = round;
            Workers.Run(ThreadsPerRound, t =>
            {
                // Every other thread of a round exits mid-way, its cache holding whatever it held.
                int operations = t % 2 == 0 ? OperationsPerThread : OperationsPerThread / 3 + t;
                int seed = roundNumber * ThreadsPerRound + t;
                // Half the threads mostly create and hand over; the others mostly free what was handed over.
                bool producer = t < ThreadsPerRound / 2;
                var random = new Random(seed);
                var held = new List<Marked>(HeldPerThread);
                for (int i = 0; i < operations; i++)
                {
                    if (held.Count < HeldPerThread && random.Next(3) != 0)
                    {
                        held.Add(Create(random.Next(2) == 0, Interlocked.Increment(ref nextMark), live));
                    }
                    else if (held.Count > 0)
                    {
                        int index = random.Next(held.Count);
                        Marked item = held[index];
                        held[index] = held[^1];
                        held.RemoveAt(held.Count - 1);
                        // Producers hand most of theirs over: slots then flow through the shared store.
                        if (random.Next(producer ? 4 : 8) != 0)
                        {
                            handedOver.Enqueue(item);
                        }
                        else
                        {
                            Free(item, live, stale);
                            Interlocked.Increment(ref freedOwn);
                        }
                    }

                    // Free what another thread made, when there is some.
                    for (int j = producer ? 0 : 3; j > 0 && handedOver.TryDequeue(out Marked other); j--)
                    {
                        Free(other, live, stale);
                        Interlocked.Increment(ref freedOthers);
                    }
                }

                // What a thread still holds when it exits goes to the others to free.
                foreach (Marked item in held)
                {
                    handedOver.Enqueue(item);
                }

                if (operations < OperationsPerThread)
                {
                    Interlocked.Increment(ref exitedEarly);
                }

                Interlocked.Increment(ref ran);
            });

            // The exited threads' caches go back to the shared store through their finalizers.
            CollectAndFinalize();
        }

        while (handedOver.TryDequeue(out Marked item))
        {
            Free(item, live, stale);
            Interlocked.Increment(ref freedOthers);
        }

        Assert.Equal(Rounds * ThreadsPerRound, ran);
        Assert.True(exitedEarly > 0, "No thread exited mid-way.");
        Assert.True(freedOwn > 0, "No thread freed what it made.");
        Assert.True(freedOthers > 0, "No thread freed what another made.");
        Assert.Empty(live.Slots);
        Assert.Equal(nextMark, stale.Count);
        Assert.All(stale, handle => Assert.False(handle.IsValid, $"The handle of a freed structure (slot {handle.Slot}) is valid again."));
        // Slots came back and were reused: the table grows only when a thread's cache and the
        // shared store are both empty, so by at most the most structures live at once plus what
        // the caches not yet given back held (this round's threads, this one, the finalizer's).
        int grown = SlotTable.HandedOut - handedOutBefore;
        int bound = live.Peak + ((ThreadsPerRound + 2) * SlotCache.Capacity) + SlotCache.Batch;
        Assert.True(grown <= bound, $"The slot table grew by {grown:N0} slots for {nextMark:N0} structures, at most {live.Peak:N0} live at once (bound {bound:N0}): slots were lost.");
    }

    private static Marked Create(bool fixedBuffer, int mark, LiveSlots live)
    {
        Marked item = fixedBuffer
            ? new Marked(new FixedBuffer<int>(Length), null, mark)
            : new Marked(default, new SafeArray<int>(Length), mark);
        for (int i = 0; i < Length; i++)
        {
            if (item.Array is null)
            {
                FixedBuffer<int> buffer = item.Fixed;
                buffer[i] = mark;
            }
            else
            {
                item.Array[i] = mark;
            }
        }

        AllocationHandle handle = item.Handle;
        if (!live.Slots.TryAdd(handle.Slot, mark))
        {
            live.Slots.TryGetValue(handle.Slot, out int holder);
            Assert.Fail($"Slot {handle.Slot} was handed to structure {mark} while structure {holder} still holds it.");
        }

        int count = Interlocked.Increment(ref live.Count);
        int peak;
        while (count > (peak = Volatile.Read(ref live.Peak)) && Interlocked.CompareExchange(ref live.Peak, count, peak) != peak)
        {
        }

        return item;
    }

    private static void Free(Marked item, LiveSlots live, ConcurrentQueue<AllocationHandle> stale)
    {
        AllocationHandle handle = item.Handle;
        Assert.True(handle.IsValid, $"Structure {item.Mark}'s handle is invalid before its free.");
        for (int i = 0; i < Length; i++)
        {
            int value = item.Array is null ? item.Fixed[i] : item.Array[i];
            Assert.True(value == item.Mark, $"Structure {item.Mark} holds {value} at {i}: another structure wrote its memory.");
        }

        // Out of the record before the free: once freed, another thread may be given the slot.
        Interlocked.Decrement(ref live.Count);
        Assert.True(live.Slots.TryRemove(new KeyValuePair<int, int>(handle.Slot, item.Mark)), $"Slot {handle.Slot} of structure {item.Mark} was recorded for another structure.");
        if (item.Array is null)
        {
            item.Fixed.Free();
        }
        else
        {
            item.Array.Dispose();
        }

        Assert.False(handle.IsValid, $"Structure {item.Mark}'s handle is still valid after its free.");
        stale.Enqueue(handle);
    }

    private static void CollectAndFinalize()
    {
        for (int i = 0; i < 2; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    private sealed class LiveSlots
    {
        public readonly ConcurrentDictionary<int, int> Slots = new();
        public int Count;
        public int Peak;
    }

    private readonly record struct Marked(FixedBuffer<int> Fixed, SafeArray<int>? Array, int Mark)
    {
        public AllocationHandle Handle => Array is null ? Fixed.Handle : Array.Handle;
    }
}
