using System.Runtime.CompilerServices;
using jemalloc.Ledger;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// Each thread takes and gives back ledger slots through its own cache, a batch at a time from the
/// shared store. The slots a thread's cache holds when the thread exits must come back, or
/// threads that come and go would grow the slot table without bound.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class SlotCacheTests : LeakCheckedTest
{
    private const int Rounds = 50;
    private const int ThreadsPerRound = 4;
    private const int BuffersPerThread = 100;

    [Fact]
    public void Threads_that_allocate_free_and_exit_do_not_grow_the_slot_table() =>
        WithoutCheckedMode(AssertExitedThreadsStrandNoSlots);

    [Fact]
    public void A_slot_freed_on_another_thread_is_reused_and_every_stale_handle_stays_invalid() =>
        WithoutCheckedMode(AssertSlotsFlowFromTheFreeingThreadToTheAllocatingOne);

    [Fact]
    public void The_shared_store_refuses_more_free_slots_than_the_table_has_and_stays_unchanged()
    {
        // A slot given back twice would push the store past the slots there are: refused before
        // anything is written, rather than written past the store's committed memory.
        int tooMany = SlotTable.HandedOut + (4 << 16); // past the committed table even if other tests grow it meanwhile
        int before = SlotTable.CountShared();
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => SlotTable.GiveBack(new int[tooMany]));
        Assert.Contains("freed twice", e.Message, StringComparison.Ordinal);
        Assert.True(SlotTable.CountShared() < before + (tooMany / 2), "the refused slots were added to the store");
    }

    [Fact]
    public void New_slots_come_in_runs_whose_records_fill_whole_pages()
    {
        // Two threads' runs then never share a page of records, which the CPU's prefetchers would
        // pull back and forth between the cores.
        Assert.Equal(64, Unsafe.SizeOf<SlotRecord>());
        Assert.Equal(0, Unsafe.SizeOf<SlotRecord>() * SlotCache.Batch % 4096);

        int[] run = new int[SlotCache.Batch];
        Assert.Equal(run.Length, SlotTable.TakeNew(run));
        try
        {
            int first = run.Min();
            Assert.Equal(0, first % SlotCache.Batch);
            Assert.Equal(Enumerable.Range(first, run.Length), run.Order());
        }
        finally
        {
            // Never used, so free: the store takes them as a cache's batch.
            SlotTable.GiveBack(run);
        }
    }

    [Fact]
    public void A_cache_keeps_exactly_its_capacity_and_a_drain_gives_back_the_oldest_batch()
    {
        // The cache reads and writes its slots without bounds checks: one slot past its capacity
        // would land in the margin unnoticed. Real, never-used slots, so that whatever the cache
        // gives back is a true free slot; each goes back to the shared store exactly once.
        int[] slots = new int[SlotCache.Capacity + SlotCache.Batch];
        for (int run = 0; run < slots.Length; run += SlotCache.Batch)
        {
            Assert.Equal(SlotCache.Batch, SlotTable.TakeNew(slots.AsSpan(run, SlotCache.Batch)));
        }

        var cache = new SlotCache();
        var popped = new List<int>();
        int pushed = 0;
        try
        {
            while (pushed < slots.Length && cache.TryPush(slots[pushed]))
            {
                pushed++;
            }

            Assert.Equal(SlotCache.Capacity, pushed);
            cache.Drain(); // gives slots[..Batch] to the shared store
            while (pushed < slots.Length && cache.TryPush(slots[pushed]))
            {
                pushed++;
            }

            Assert.Equal(slots.Length, pushed);
            while (cache.TryPop(out int slot))
            {
                popped.Add(slot);
            }

            // Last in, first out, and the drained batch was the oldest one.
            Assert.Equal(slots.Skip(SlotCache.Batch).Reverse(), popped);
            Assert.False(cache.TryPop(out _));
        }
        finally
        {
            while (cache.TryPop(out int slot))
            {
                popped.Add(slot);
            }

            SlotTable.GiveBack([.. popped, .. slots.AsSpan(pushed)]);
        }
    }

    [Fact]
    public void A_refill_takes_at_most_a_batch_into_an_empty_cache()
    {
        var cache = new SlotCache();
        var taken = new List<int>();
        try
        {
            Assert.True(cache.Refill());
            while (cache.TryPop(out int slot))
            {
                taken.Add(slot);
            }

            Assert.InRange(taken.Count, 1, SlotCache.Batch);
            Assert.Equal(taken.Count, taken.Distinct().Count());
            Assert.All(taken, slot => Assert.InRange(slot, 0, SlotTable.HandedOut - 1));
        }
        finally
        {
            SlotTable.GiveBack([.. taken]);
        }
    }

    // Checked mode's quarantine holds freed slots back (neither in use, cached nor in the shared
    // store, and not reused): these tests count slots, so they run with it off, and restore it.
    private static void WithoutCheckedMode(Action test)
    {
        bool wasChecked = AllocationLedger.CheckedMode;
        AllocationLedger.CheckedMode = false;
        try
        {
            test();
        }
        finally
        {
            AllocationLedger.CheckedMode = wasChecked;
        }
    }

    private static void AssertExitedThreadsStrandNoSlots()
    {
        // Slots neither in the shared store nor in use: the ones thread caches hold.
        static int HeldByCaches() => SlotTable.HandedOut - SlotTable.CountShared() - (int)AllocationLedger.LiveCount;

        CollectAndFinalize();
        int before = HeldByCaches();
        int handedOutBefore = SlotTable.HandedOut;
        int ran = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var failures = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
            var threads = new Thread[ThreadsPerRound];
            for (int t = 0; t < threads.Length; t++)
            {
                threads[t] = new Thread(() =>
                {
                    try
                    {
                        var buffers = new FixedBuffer<byte>[BuffersPerThread];
                        for (int i = 0; i < buffers.Length; i++)
                        {
                            buffers[i] = new FixedBuffer<byte>(16);
                            buffers[i][0] = 1;
                        }

                        foreach (FixedBuffer<byte> buffer in buffers)
                        {
                            buffer.Free();
                        }

                        Interlocked.Increment(ref ran);
                    }
                    catch (Exception e)
                    {
                        failures.Enqueue(e);
                    }
                });
                threads[t].Start();
            }

            foreach (Thread thread in threads)
            {
                Assert.True(thread.Join(TimeSpan.FromSeconds(60)), "A worker thread did not finish within a minute.");
            }

            Assert.Empty(failures);
            CollectAndFinalize();
        }

        CollectAndFinalize();
        int after = HeldByCaches();
        Assert.Equal(Rounds * ThreadsPerRound, ran);
        // Each exited thread's cache held at least a batch of free slots; they must all be back on
        // the shared store. Only live threads' caches (this one, the finalizer's) may hold more now.
        int stranded = after - before;
        Assert.True(stranded <= 2 * SlotCache.Capacity, $"{stranded:N0} slots are held by caches after {ran} threads exited (table grew by {SlotTable.HandedOut - handedOutBefore:N0}).");
        Assert.True(SlotTable.HandedOut - handedOutBefore <= 2 * SlotCache.Capacity + BuffersPerThread * ThreadsPerRound, $"The slot table grew by {SlotTable.HandedOut - handedOutBefore:N0} slots.");
    }

    private static void AssertSlotsFlowFromTheFreeingThreadToTheAllocatingOne()
    {
        // A producer allocates, a consumer frees: slots flow from one cache to the other through the
        // shared store, and a handle of each freed buffer stays invalid whichever allocation reuses its slot.
        const int Count = 5_000;
        var handed = new System.Collections.Concurrent.BlockingCollection<FixedBuffer<int>>(boundedCapacity: 256);
        var freed = new System.Collections.Concurrent.ConcurrentQueue<AllocationHandle>();
        Exception? producerFailure = null;
        Exception? consumerFailure = null;
        var producer = new Thread(() =>
        {
            try
            {
                for (int i = 0; i < Count; i++)
                {
                    var buffer = new FixedBuffer<int>(4);
                    buffer[3] = i;
                    handed.Add(buffer);
                }
            }
            catch (Exception e)
            {
                producerFailure = e;
            }
            finally
            {
                handed.CompleteAdding();
            }
        });
        int consumed = 0;
        var consumer = new Thread(() =>
        {
            try
            {
                foreach (FixedBuffer<int> buffer in handed.GetConsumingEnumerable())
                {
                    Assert.Equal(consumed, buffer[3]);
                    freed.Enqueue(buffer.Handle);
                    buffer.Free();
                    consumed++;
                }
            }
            catch (Exception e)
            {
                consumerFailure = e;
            }
        });
        producer.Start();
        consumer.Start();
        Assert.True(producer.Join(TimeSpan.FromSeconds(120)), "The producer did not finish within two minutes.");
        Assert.True(consumer.Join(TimeSpan.FromSeconds(120)), "The consumer did not finish within two minutes.");
        Assert.Null(producerFailure);
        Assert.Null(consumerFailure);
        Assert.Equal(Count, consumed);
        Assert.Equal(Count, freed.Count);
        Assert.All(freed, handle => Assert.False(handle.IsValid));
        // The slots came back: far fewer distinct slots than buffers were used.
        Assert.True(freed.Select(handle => handle.Slot).Distinct().Count() < Count / 4, "Slots freed on the consumer thread were not reused by the producer.");
    }

    private static void CollectAndFinalize()
    {
        for (int i = 0; i < 2; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }
}
