using jemalloc.ArenaBooks;
using jemalloc.Interop;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Arenas;

[Collection(LeakChecked.Name)]
public sealed unsafe class JemArenaTests : LeakCheckedTest
{
    [Fact]
    public void Raw_memory_is_allocated_in_the_arena_counted_and_freed()
    {
        using var arena = new JemArena();
        byte* memory = (byte*)arena.Allocate(1000);
        new Span<byte>(memory, 1000).Fill(0xAB);

        Assert.Equal((long)JemNative.Nallocx(1000, arena.Flags), arena.UsedBytes);
        Assert.Equal(arena.Index, LookupArena(memory));

        arena.Free(memory);
        Assert.Equal(0, arena.UsedBytes);
        Assert.Equal((long)JemNative.Nallocx(1000, arena.Flags), arena.PeakBytes);
    }

    [Fact]
    public void Zeroed_and_aligned_allocations_are_zeroed_and_aligned()
    {
        using var arena = new JemArena();
        void* aligned = arena.Allocate(100, 4096);
        Assert.Equal(0, (long)aligned % 4096);
        byte* zeroed = (byte*)arena.AllocateZeroed(10_000);
        Assert.True(new ReadOnlySpan<byte>(zeroed, 10_000).IndexOfAnyExcept((byte)0) < 0);
        arena.Free(aligned);
        arena.Free(zeroed);
        arena.Free(null);
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void Bad_sizes_and_alignments_are_refused()
    {
        using var arena = new JemArena();
        Assert.Throws<ArgumentOutOfRangeException>(() => arena.Allocate(0));
        Assert.Throws<ArgumentException>(() => arena.Allocate(16, 3));
        Assert.Throws<OutOfMemoryException>(() => arena.Allocate(nuint.MaxValue - 4096));
        Assert.Throws<ArgumentOutOfRangeException>(() => new JemArena(budgetBytes: 0));
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void Reset_frees_everything_and_leaves_the_arena_usable()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode frees through the quarantine, which jemalloc counts as allocated.
        using var arena = new JemArena();
        for (int i = 0; i < 1000; i++)
        {
            _ = arena.Allocate((nuint)(16 + i));
        }

        _ = arena.Allocate(1 << 20);
        ArenaStatistics before = arena.GetStatistics();
        Assert.True(before.SmallAllocatedBytes > 16_000);
        Assert.True(before.LargeAllocatedBytes >= 1 << 20);
        Assert.True(before.SmallAllocations >= 1000);

        arena.Reset();

        Assert.Equal(0, arena.UsedBytes);
        ArenaStatistics after = arena.GetStatistics();
        Assert.Equal(0, after.SmallAllocatedBytes);
        Assert.Equal(0, after.LargeAllocatedBytes);
        byte* again = (byte*)arena.Allocate(64);
        again[63] = 1;
        arena.Free(again);
    }

    [Fact]
    public void Dispose_gives_the_arena_up_and_every_later_use_throws()
    {
        var arena = new JemArena(budgetBytes: 1 << 20);
        _ = arena.Allocate(4096);
        arena.Dispose();

        // (jemalloc's arena is kept for the next JemArena, emptied: ArenaPoolTests.)
        Assert.True(arena.IsDisposed);
        Assert.Equal(0, arena.UsedBytes);
        Assert.Throws<ObjectDisposedException>(() => arena.Allocate(16));
        Assert.Throws<ObjectDisposedException>(() => arena.Reset());
        Assert.Throws<ObjectDisposedException>(() => arena.Options);
        Assert.Throws<ObjectDisposedException>(() => arena.GetStatistics());
        Assert.Throws<ObjectDisposedException>(() => arena.DirtyDecayMilliseconds);
        Assert.Throws<ObjectDisposedException>(() => arena.Purge());
        Assert.Throws<ObjectDisposedException>(() => arena.Free((void*)4096));
        arena.Dispose(); // a second dispose does nothing
        Assert.Contains("destroyed", arena.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Options_of_a_destroyed_arena_are_refused_and_a_reused_index_belongs_to_the_new_arena()
    {
        var old = new JemArena();
        AllocationOptions oldOptions = old.Options;
        old.Dispose();

        Assert.Throws<ObjectDisposedException>(() => new SafeArray<int>(10, oldOptions));
        Assert.Throws<ObjectDisposedException>(() => new FixedBuffer<int>(10, oldOptions));

        using var next = new JemArena();
        Assert.Equal(old.Index, next.Index); // jemalloc recycles destroyed indices
        Assert.Throws<ObjectDisposedException>(() => old.Allocate(16));
        Assert.Equal(0, old.UsedBytes);
        using SafeArray<int> array = next.CreateArray<int>(10);
        Assert.Equal(48, next.UsedBytes);
    }

    [Fact]
    public void An_index_reused_by_an_arena_made_without_JemArena_is_not_counted_or_refused()
    {
        var old = new JemArena(budgetBytes: 4096);
        old.Dispose();
        // Kept for the next JemArena until given up, as when jemalloc needs an index (it has 4095):
        // then destroyed, and its index is jemalloc's to reuse.
        Assert.True(ArenaPool.DestroyOne());
        uint raw = MallctlKeys.Arenas.Create.Get();
        try
        {
            Assert.Equal(old.Index, raw);
            using var array = new SafeArray<long>(10_000, new AllocationOptions(MallocxFlags.Arena(raw) | MallocxFlags.NoThreadCache));
            array[9_999] = 1;
            Assert.Equal(0, old.UsedBytes);
        }
        finally
        {
            MallctlKeys.Arena(raw).Destroy.Run();
        }
    }

    [Fact]
    public void Budget_exceeded_throws_allocates_nothing_and_leaves_the_arena_usable()
    {
        using var arena = new JemArena(budgetBytes: 64 * 1024);
        void* first = arena.Allocate(32 * 1024);
        void* second = arena.Allocate(32 * 1024);
        Assert.Equal(64 * 1024, arena.UsedBytes);

        var refused = Assert.Throws<ArenaBudgetExceededException>(() => arena.Allocate(16));
        Assert.IsAssignableFrom<OutOfMemoryException>(refused);
        Assert.Equal(arena.Index, refused.ArenaIndex);
        Assert.Equal(64 * 1024, refused.BudgetBytes);
        Assert.Equal(64 * 1024, refused.UsedBytes);
        Assert.Equal(16, refused.RequestedBytes);
        Assert.Contains("budget", refused.Message, StringComparison.Ordinal);
        Assert.Equal(64 * 1024, arena.UsedBytes);
        Assert.Equal(64 * 1024, arena.PeakBytes);

        arena.Free(second);
        void* third = arena.Allocate(16 * 1024);
        Assert.Equal(48 * 1024, arena.UsedBytes);
        arena.Free(first);
        arena.Free(third);
        Assert.Equal(0, arena.UsedBytes);
        Assert.Equal(64 * 1024, arena.BudgetBytes);
    }

    [Fact]
    public void Structures_created_in_the_arena_count_against_its_budget()
    {
        using var arena = new JemArena(budgetBytes: 100 * 1024);
        using SafeArray<long> array = arena.CreateArray<long>(8 * 1024);
        Assert.Equal(64 * 1024, arena.UsedBytes);
        FixedBuffer<byte> buffer = arena.CreateBuffer<byte>(16 * 1024);
        Assert.Equal(80 * 1024, arena.UsedBytes);

        Assert.Throws<ArenaBudgetExceededException>(() => arena.CreateHugeArray<long>(4 * 1024));
        Assert.Throws<ArenaBudgetExceededException>(() => new FixedBuffer<long>(4 * 1024, arena.Options));
        Assert.Equal(80 * 1024, arena.UsedBytes);

        buffer.Free();
        Assert.Equal(64 * 1024, arena.UsedBytes);
        using HugeArray<long> huge = arena.CreateHugeArray<long>(4 * 1024);
        Assert.Equal(96 * 1024, arena.UsedBytes);
        huge.Dispose();
        array.Dispose();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void Structures_get_the_arena_flags_without_a_thread_cache_whatever_flags_name_the_arena()
    {
        using var arena = new JemArena();
        // A caller naming the arena with a thread cache of its own still gets none: a reset must never meet cached memory.
        using var array = new SafeArray<int>(100, new AllocationOptions(MallocxFlags.Arena(arena.Index)));
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == array.Pointer);
        Assert.Equal(arena.Index, info.Arena);
        Assert.True(arena.UsedBytes >= 400);
    }

    [Fact]
    public void Reset_invalidates_structures_in_the_arena_and_their_disposal_frees_nothing_twice()
    {
        using var arena = new JemArena(budgetBytes: 1 << 20);
        using var outside = new SafeArray<int>(10);
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(100);
        SafeArray<int> array = arena.CreateArray<int>(100);
        HugeArray<int> huge = arena.CreateHugeArray<int>(100);
        buffer[0] = 1;
        array[0] = 2;
        huge[0] = 3;
        long live = AllocationLedger.LiveCount;

        arena.Reset();

        Assert.Equal(live - 3, AllocationLedger.LiveCount);
        Assert.Equal(0, arena.UsedBytes);
        Assert.False(buffer.IsValid);
        Assert.False(array.IsValid);
        Assert.False(huge.IsValid);
        Assert.Throws<ObjectDisposedException>(() => buffer[0]);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        Assert.Throws<ObjectDisposedException>(() => huge[0]);
        Assert.Throws<ObjectDisposedException>(() => buffer.Free());
        array.Dispose();
        huge.Dispose();
        Assert.Equal(0, arena.UsedBytes);
        Assert.True(outside.IsValid);

        using SafeArray<int> fresh = arena.CreateArray<int>(100);
        fresh[99] = 7;
        Assert.Equal(7, fresh[99]);
    }

    [Fact]
    public void Destroy_invalidates_structures_and_their_finalizers_free_nothing()
    {
        var arena = new JemArena();
        SafeArray<long> kept = arena.CreateArray<long>(1000);
        LeakArrayInArena(arena);
        arena.Dispose();

        Assert.Throws<ObjectDisposedException>(() => kept[0]);
        Assert.Throws<ObjectDisposedException>(() => kept.Lease().Dispose());
        kept.Dispose();
        // The leaked array's finalizer runs now (the leak check collects): it must free nothing.
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    [Fact]
    public void Reset_and_destroy_refuse_while_a_structure_is_acquired_and_change_nothing()
    {
        var arena = new JemArena();
        SafeArray<int> array = arena.CreateArray<int>(10);
        array[5] = 42;
        array.Acquire();

        Assert.Throws<InvalidOperationException>(() => arena.Reset());
        Assert.Throws<InvalidOperationException>(() => arena.Dispose());
        Assert.False(arena.IsDisposed);
        Assert.Equal(42, array[5]);
        Assert.Equal(48, arena.UsedBytes); // the size class of 40 bytes

        array.Release();
        arena.Reset();
        Assert.False(array.IsValid);
        arena.Dispose();
        array.Dispose();
    }

    [Fact]
    public void A_refused_reset_leaves_every_other_structure_exactly_as_it_was()
    {
        using var arena = new JemArena();
        FixedBuffer<int>[] buffers = Enumerable.Range(0, 20).Select(i => arena.CreateBuffer<int>(4)).ToArray();
        for (int i = 0; i < buffers.Length; i++)
        {
            buffers[i][0] = i;
        }

        buffers[10].Acquire();
        Assert.Throws<InvalidOperationException>(() => arena.Reset());

        for (int i = 0; i < buffers.Length; i++)
        {
            Assert.True(buffers[i].IsValid);
            Assert.Equal(i, buffers[i][0]);
            if (i != 10)
            {
                buffers[i].Acquire();
                buffers[i].Release();
            }
        }

        buffers[10].Release();
        Assert.Equal(20 * 16, arena.UsedBytes);
        foreach (FixedBuffer<int> buffer in buffers)
        {
            buffer.Free();
        }

        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void Several_threads_allocate_and_free_in_one_arena_within_its_budget()
    {
        const int Threads = 4;
        const int Rounds = 2000;
        using var arena = new JemArena(budgetBytes: 4 << 20);
        long refusals = 0;
        long allocations = 0;
        Workers.Run(Threads, t =>
        {
            var random = new Random(t);
            var held = new List<nint>();
            for (int round = 0; round < Rounds; round++)
            {
                try
                {
                    nuint size = (nuint)random.Next(1, 64 * 1024);
                    byte* memory = (byte*)arena.Allocate(size);
                    memory[0] = (byte)t;
                    memory[size - 1] = (byte)t;
                    held.Add((nint)memory);
                    Interlocked.Increment(ref allocations);
                }
                catch (ArenaBudgetExceededException)
                {
                    Interlocked.Increment(ref refusals);
                }

                if (held.Count > 20 || random.Next(3) == 0)
                {
                    foreach (nint memory in held)
                    {
                        arena.Free((void*)memory);
                    }

                    held.Clear();
                }
            }

            foreach (nint memory in held)
            {
                arena.Free((void*)memory);
            }
        });

        // Every round either allocated or was refused for the budget, nothing else.
        Assert.Equal((long)Threads * Rounds, allocations + refusals);
        Assert.True(allocations > 0);
        Assert.Equal(0, arena.UsedBytes);
        Assert.InRange(arena.PeakBytes, 1, 4 << 20);
        Assert.Equal(0, arena.GetStatistics().SmallAllocatedBytes + arena.GetStatistics().LargeAllocatedBytes);
    }

    [Fact]
    public void Resets_racing_structure_allocations_on_other_threads_never_leave_a_structure_on_freed_memory()
    {
        using var arena = new JemArena();
        using var stop = new CancellationTokenSource();
        long created = 0;
        Workers.Running workers = Workers.Start(2, _ =>
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    FixedBuffer<long> buffer = arena.CreateBuffer<long>(64);
                    buffer[63] = 1;
                    buffer.Free();
                    Interlocked.Increment(ref created);
                }
                catch (ObjectDisposedException)
                {
                    // A reset invalidated the buffer between its creation and its use: exactly what must happen.
                }
            }
        });
        try
        {
            for (int reset = 0; reset < 200 && !workers.HasFailed; reset++)
            {
                arena.Reset();
            }
        }
        finally
        {
            stop.Cancel();
            workers.Join();
        }

        arena.Reset();

        Assert.DoesNotContain(AllocationLedger.Snapshot(), info => info.Arena == arena.Index);
        Assert.Equal(0, arena.UsedBytes);
        Assert.True(Interlocked.Read(ref created) > 0);
    }

    [Fact]
    public void Small_memory_freed_on_any_thread_is_cached_per_thread_and_returned_by_statistics_and_reset()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode frees through the quarantine, which jemalloc counts as allocated.
        using var arena = new JemArena();
        nint[] blocks = [];
        Workers.RunOne(() => blocks = Enumerable.Range(0, 500).Select(i => (nint)arena.Allocate(64)).ToArray());
        Assert.Equal(500, blocks.Length);
        Workers.RunOne(() =>
        {
            foreach (nint block in blocks)
            {
                ((byte*)block)[63] = 1;
                arena.Free((void*)block);
            }
        });

        Assert.Equal(0, arena.UsedBytes);
        // The freeing thread's cache held the blocks: the statistics return them to the arena first.
        Assert.Equal(0, arena.GetStatistics().SmallAllocatedBytes);

        for (int i = 0; i < 100; i++)
        {
            arena.Free(arena.Allocate(128));
        }

        _ = arena.Allocate(256);
        arena.Reset();
        ArenaStatistics after = arena.GetStatistics();
        Assert.Equal(0, after.SmallAllocatedBytes);
        Assert.True(after.SmallAllocations > 0);
    }

    [Fact]
    public void Decay_settings_are_read_back_and_checked()
    {
        using var arena = new JemArena();
        arena.DirtyDecayMilliseconds = 0;
        arena.MuzzyDecayMilliseconds = -1;
        Assert.Equal(0, arena.DirtyDecayMilliseconds);
        Assert.Equal(-1, arena.MuzzyDecayMilliseconds);
        arena.DirtyDecayMilliseconds = 5000;
        Assert.Equal(5000, arena.DirtyDecayMilliseconds);
        Assert.Throws<ArgumentOutOfRangeException>(() => arena.DirtyDecayMilliseconds = -2);
        Assert.Throws<ArgumentOutOfRangeException>(() => arena.MuzzyDecayMilliseconds = -2);
    }

    [Fact]
    public void Purge_returns_dirty_pages_that_decay_keeps()
    {
        using var arena = new JemArena { DirtyDecayMilliseconds = -1 };
        void* memory = arena.Allocate(4 << 20);
        new Span<byte>(memory, 4 << 20).Fill(1);
        arena.Free(memory);
        arena.Decay();
        Assert.True(arena.GetStatistics().DirtyBytes >= 4 << 20);

        arena.Purge();

        Assert.Equal(0, arena.GetStatistics().DirtyBytes);
    }

    [Fact]
    public void Options_name_the_arena_without_a_thread_cache()
    {
        using var arena = new JemArena(hugePages: true);
        Assert.Equal(arena.Index, arena.Options.Flags.ArenaIndex);
        Assert.Equal(MallocxFlags.NoThreadCache.Value, arena.Options.Flags.Value & 0xFFF00);
        Assert.True(arena.Options.HugePages);
        Assert.True(arena.HugePages);
        Assert.Null(arena.BudgetBytes);
        Assert.Contains($"JemArena {arena.Index}", arena.ToString(), StringComparison.Ordinal);
    }

    private static uint LookupArena(void* memory)
    {
        uint arena = 0;
        nuint length = sizeof(uint);
        Assert.Equal(0, Jem.Mallctl("arenas.lookup", &arena, &length, &memory, (nuint)sizeof(void*)));
        return arena;
    }

    private static void LeakArrayInArena(JemArena arena)
    {
        var leaked = arena.CreateArray<long>(1000);
        leaked[0] = 1;
    }
}
