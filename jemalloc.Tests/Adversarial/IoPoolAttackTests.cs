using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.IO;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// <see cref="JemMemoryPool"/>, which keeps returned blocks for the next rents, attacked as a hostile
/// user would (public API only, plus the finalizer tricks any .NET program can play): stale memories
/// and pins across re-rents, disposes and over-unpins racing each other, owners resurrected or
/// re-registered for finalization, dropped pins in an arena, a pool dropped with its dropped owners,
/// absurd sizes. A block must never belong to two rents, be freed under a rent, leak, or be counted
/// twice in the books.
/// In-process tests (leak-checked) of the I/O family, for the failure classes lifetime misuse, dispose
/// races, arena reset under use and bad input; the child-process scenarios of those classes are in
/// <see cref="LifetimeMisuseTests"/>, <see cref="DisposeRaceTests"/>, <see cref="ArenaResetTests"/> and
/// <see cref="BadInputTests"/>.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class IoPoolAttackTests : LeakCheckedTest
{
    [Fact]
    public unsafe void A_stale_memory_its_manager_and_its_pin_handle_of_an_earlier_rent_cannot_touch_the_block_s_next_rents()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> first = pool.Rent(4096);
        Memory<byte> stale = first.Memory;
        MemoryHandle stalePin = stale.Pin();
        nint address = (nint)stalePin.Pointer;
        stalePin.Dispose();
        Assert.True(MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(stale, out MemoryManager<byte>? staleManager));
        first.Dispose();

        for (int rent = 0; rent < 50; rent++)
        {
            using IMemoryOwner<byte> next = pool.Rent(3000 + rent);
            using (MemoryHandle pin = next.Memory.Pin())
            {
                Assert.Equal(address, (nint)pin.Pointer);
                next.Memory.Span.Fill((byte)rent);

                // Every way into the old rent fails, and none of them ends this rent's pin or returns its block.
                Assert.Throws<ObjectDisposedException>(() => stale.Span.Length);
                Assert.Throws<ObjectDisposedException>(() => stale[10..].Pin());
                Assert.Throws<ObjectDisposedException>(() => staleManager!.GetSpan());
                Assert.Throws<InvalidOperationException>(staleManager!.Unpin);
                ((IDisposable)staleManager).Dispose();
                first.Dispose();
                stalePin.Dispose();
                Assert.Equal(1, pool.GetStatistics().OutstandingCount);
            }

            Assert.False(next.Memory.Span.ContainsAnyExcept((byte)rent));
        }

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((51, 51, 1), (stats.RentCount, stats.ReturnCount, stats.CachedCount));
    }

    [Fact]
    public void Owners_disposed_by_several_threads_at_once_are_returned_exactly_once_each()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        const int owners = 3000;
        const int threads = 4;
        using var pool = new JemMemoryPool(maxCachedBytes: 1 << 20);
        var rented = new IMemoryOwner<byte>[owners];
        for (int i = 0; i < owners; i++)
        {
            rented[i] = pool.Rent(64 << (i % 8));
        }

        long bytes = pool.GetStatistics().RentedBytes;
        using var start = new Barrier(threads);
        Workers.Run(threads, t =>
        {
            Assert.True(start.SignalAndWait(Workers.DefaultTimeout), "the other threads did not start");
            // Every thread disposes every owner, in its own order, so each owner meets several disposes at once.
            for (int i = 0; i < owners; i++)
            {
                rented[t % 2 == 0 ? i : owners - 1 - i].Dispose();
            }
        });

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((owners, owners), (stats.RentCount, stats.ReturnCount));
        Assert.Equal((bytes, bytes), (stats.RentedBytes, stats.ReturnedBytes));
        // 8 sizes, each kept up to 64 blocks or its share of 1 MiB; the blocks kept must be distinct blocks.
        long expectedKept = Enumerable.Range(0, 8).Sum(k => Math.Min(PooledBlockCache.MaxBlocksPerClass, (1 << 20) / 15 / (64 << k)));
        Assert.Equal(expectedKept, stats.CachedCount);
        var addresses = new HashSet<nint>();
        var again = new List<IMemoryOwner<byte>>();
        for (int i = 0; i < owners; i++)
        {
            IMemoryOwner<byte> owner = pool.Rent(64 << (i % 8));
            again.Add(owner);
            unsafe
            {
                using MemoryHandle pin = owner.Memory.Pin();
                Assert.True(addresses.Add((nint)pin.Pointer), "one block went to two live rents");
            }
        }

        again.ForEach(owner => owner.Dispose());
    }

    [Fact]
    public void Direct_unpins_through_the_manager_racing_real_pins_are_all_refused_and_end_no_pin()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        const int rounds = 4;
        const int pinsPerThread = 20_000;
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        for (int round = 1; round <= rounds; round++)
        {
            IMemoryOwner<byte> owner = pool.Rent(1024);
            Memory<byte> memory = owner.Memory;
            Assert.True(MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(memory, out MemoryManager<byte>? manager));
            long pins = 0, ownUnpins = 0, directUnpins = 0;
            bool pinning = true;
            var pinners = Workers.Start(2, _ =>
            {
                for (int i = 0; i < pinsPerThread; i++)
                {
                    MemoryHandle pin = memory[(i % 1000)..].Pin();
                    Interlocked.Increment(ref pins);

                    // Throws if a direct unpin ended this pin.
                    pin.Dispose();
                    Interlocked.Increment(ref ownUnpins);
                }
            });
            // More threads than cores, each at least once: a direct unpin may land at any point of a pin's life.
            Workers.Run(3, _ =>
            {
                do
                {
                    Assert.Throws<InvalidOperationException>(manager!.Unpin);
                    Interlocked.Increment(ref directUnpins);
                }
                while (Volatile.Read(ref pinning) && Volatile.Read(ref pins) < 2 * pinsPerThread);
            });
            Volatile.Write(ref pinning, false);
            pinners.Join();

            Assert.Equal((2L * pinsPerThread, 2L * pinsPerThread), (pins, ownUnpins));
            Assert.True(directUnpins >= 3);

            // No pin is left: a dispose returns the block at once, and the ledger holds nothing (a reset is allowed).
            owner.Dispose();
            Assert.Equal((round, round, 1), (pool.GetStatistics().RentCount, pool.GetStatistics().ReturnCount, pool.GetStatistics().CachedCount));
            arena.Reset();
            Assert.Throws<ObjectDisposedException>(() => memory.Span.Length);
        }
    }

    [Fact]
    public void An_owner_resurrected_after_its_finalizer_stays_disposed_so_its_set_aside_block_never_goes_to_another_rent()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var pool = new JemMemoryPool();
        Resurrector.Drop(pool, pin: false);
        Finalization.CollectAndFinalize();
        (IMemoryOwner<byte> owner, _) = Resurrector.TakeResurrected();

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1, 1, 0, 1), (stats.RentCount, stats.ReturnCount, stats.CachedCount, stats.SetAsideCount));
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);

        // A dispose from the finalizer of another object (as here) comes too late: the block is set aside.
        owner.Dispose();
        Assert.Equal(stats, pool.GetStatistics());
        AssertTheSetAsideBlockGoesToNoRentAndIsFreedWithThePool(pool, live);
    }

    [Fact]
    public void A_pin_resurrected_after_its_owner_s_finalizer_ends_nothing_and_does_not_bring_the_set_aside_block_back()
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var pool = new JemMemoryPool();
        Resurrector.Drop(pool, pin: true);
        Finalization.CollectAndFinalize();
        (IMemoryOwner<byte> owner, MemoryHandle pin) = Resurrector.TakeResurrected();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1, 1, 0, 1), (stats.RentCount, stats.ReturnCount, stats.CachedCount, stats.SetAsideCount));

        pin.Dispose();
        owner.Dispose();
        Assert.Equal(stats, pool.GetStatistics());
        AssertTheSetAsideBlockGoesToNoRentAndIsFreedWithThePool(pool, live);
    }

    [Fact]
    public void An_owner_re_registered_for_finalization_after_its_block_went_back_does_not_set_the_block_aside()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var pool = new JemMemoryPool();
        ReturnAndReRegister(pool);
        Finalization.CollectAndFinalize();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1, 1, 1, 0), (stats.RentCount, stats.ReturnCount, stats.CachedCount, stats.SetAsideCount));

        using (IMemoryOwner<byte> next = pool.Rent(4096))
        {
            pool.Dispose();
            next.Memory.Span.Fill(1);
            Assert.False(next.Memory.Span.ContainsAnyExcept((byte)1));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ReturnAndReRegister(JemMemoryPool pool)
        {
            IMemoryOwner<byte> owner = pool.Rent(4096);
            owner.Dispose();
            GC.ReRegisterForFinalize(owner);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_pin_dropped_with_its_owner_does_not_hold_the_arena_s_reset_off_once_finalized(bool disposeOwner)
    {
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        using var arena = new JemArena();
        var pool = new JemMemoryPool(arena: arena);
        RentPinAndDrop(pool, disposeOwner);
        Finalization.CollectAndFinalize();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1, 0, 1, 0), (stats.ReturnCount, stats.OutstandingBytes, stats.SetAsideCount, stats.CachedCount));

        // Nobody can end that pin any more: the reset frees the block, as it frees every block in the arena.
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
        pool.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void RentPinAndDrop(JemMemoryPool pool, bool disposeOwner)
        {
            IMemoryOwner<byte> owner = pool.Rent(8192);
            _ = owner.Memory.Pin();
            if (disposeOwner)
            {
                owner.Dispose();
            }
        }
    }

    [Fact]
    public void Kept_and_set_aside_blocks_an_arena_reset_freed_are_no_longer_counted_as_held_by_the_pool()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        using var arena = new JemArena();
        var pool = new JemMemoryPool(arena: arena);
        pool.Rent(4096).Dispose();
        RentAndDrop(pool);
        Finalization.CollectAndFinalize();
        JemMemoryPoolStatistics before = pool.GetStatistics();
        Assert.Equal((1, 4096, 1, 8192), (before.CachedCount, before.CachedBytes, before.SetAsideCount, before.SetAsideBytes));

        arena.Reset();
        JemMemoryPoolStatistics after = pool.GetStatistics();
        Assert.Equal((0, 0, 0, 0), (after.CachedCount, after.CachedBytes, after.SetAsideCount, after.SetAsideBytes));
        Assert.Equal((2, 2, 0), (after.RentCount, after.ReturnCount, after.OutstandingBytes));
        pool.Dispose();
        Assert.Equal(live, AllocationLedger.LiveCount);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void RentAndDrop(JemMemoryPool pool) => pool.Rent(8192).Memory.Span.Fill(1);
    }

    [Fact]
    public void Destroying_the_arena_under_kept_rented_and_pinned_blocks_is_refused_while_rented_or_pinned_then_every_owner_and_rent_says_disposed()
    {
        long live = AllocationLedger.LiveCount;
        var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        pool.Rent(1024).Dispose();
        IMemoryOwner<byte> rented = pool.Rent(2048);
        IMemoryOwner<byte> pinned = pool.Rent(4096);
        MemoryHandle pin = pinned.Memory.Pin();
        pinned.Dispose();

        Assert.Throws<InvalidOperationException>(arena.Dispose);
        rented.Memory.Span.Fill(5);
        pin.Dispose();
        // Still rented: a span of it may be in use.
        Assert.Throws<InvalidOperationException>(arena.Dispose);
        Assert.Equal(5, rented.Memory.Span[2047]);
        rented.Dispose();
        arena.Dispose();

        Assert.Throws<ObjectDisposedException>(() => rented.Memory);
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(1024));
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(100_000));
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((3, 3, 0, 0), (stats.RentCount, stats.ReturnCount, stats.OutstandingBytes, stats.CachedCount));
        pool.Trim();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Rents_racing_to_a_budget_from_several_threads_never_pass_it_and_refusals_leave_no_trace_in_the_books()
    {
        // Each thread holds up to three blocks of 1-16 KiB while it rents a fourth, so one thread alone
        // passes 24 KiB (4 + 8 KiB held, 16 KiB asked) whatever the scheduler does; more are refused
        // when the threads do overlap.
        const int budget = 24 << 10;
        using var pool = new JemMemoryPool(budgetBytes: budget);
        long granted = 0, refused = 0, peak = 0;
        long outstanding = 0;
        Workers.Run(4, t =>
        {
            var held = new Queue<IMemoryOwner<byte>>();
            try
            {
                for (int i = 0; i < 5000; i++)
                {
                    int size = 1024 << ((i + t) % 5);
                    try
                    {
                        IMemoryOwner<byte> owner = pool.Rent(size);
                        long now = Interlocked.Add(ref outstanding, owner.Memory.Length);
                        Assert.InRange(now, 1, budget);
                        InterlockedMax(ref peak, now);
                        Interlocked.Increment(ref granted);
                        held.Enqueue(owner);
                    }
                    catch (MemoryPoolBudgetExceededException e)
                    {
                        Assert.Equal(budget, e.BudgetBytes);
                        Assert.True(e.OutstandingBytes + e.RequestedBytes > budget, $"refused at {e.OutstandingBytes:N0} outstanding + {e.RequestedBytes:N0} requested, within the budget");
                        Interlocked.Increment(ref refused);
                    }

                    if (held.Count > 3 || (i % 7 == 0 && held.Count > 0))
                    {
                        IMemoryOwner<byte> owner = held.Dequeue();
                        Interlocked.Add(ref outstanding, -owner.Memory.Length);
                        owner.Dispose();
                    }
                }
            }
            finally
            {
                // A failed assertion still returns what this thread holds, so the failure is reported alone.
                while (held.TryDequeue(out IMemoryOwner<byte>? owner))
                {
                    Interlocked.Add(ref outstanding, -owner.Memory.Length);
                    owner.Dispose();
                }
            }
        });

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.True(refused > 0 && granted > 0, $"granted={granted} refused={refused}: the budget was never reached");
        Assert.Equal((granted, granted, 0), (stats.RentCount, stats.ReturnCount, stats.OutstandingBytes));
        Assert.InRange(peak, budget / 2, budget);

        static void InterlockedMax(ref long target, long value)
        {
            long seen = Volatile.Read(ref target);
            while (value > seen && Interlocked.CompareExchange(ref target, value, seen) != seen)
            {
                seen = Volatile.Read(ref target);
            }
        }
    }

    [Fact]
    public void A_pool_whose_arena_was_destroyed_never_allocates_in_a_new_arena_that_took_the_same_index()
    {
        long live = AllocationLedger.LiveCount;
        var first = new JemArena();
        using var pool = new JemMemoryPool(arena: first);
        pool.Rent(4096).Dispose();
        first.Dispose();
        using var second = new JemArena();
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(4096));
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(3 << 20));
        Assert.Equal(0, second.UsedBytes);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1, 1, 0), (stats.RentCount, stats.ReturnCount, stats.CachedCount));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_block_pinned_the_most_times_it_counts_refuses_the_next_pin_and_comes_back_after_its_last_unpin()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(64);
        var pins = new List<MemoryHandle>();
        while (true)
        {
            try
            {
                pins.Add(owner.Memory.Pin());
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                break;
            }

            Assert.True(pins.Count < 40_000, "the pin count has no limit: it would wrap");
        }

        Assert.Equal(0x7FFF, pins.Count);
        owner.Dispose();
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
        for (int i = 0; i < pins.Count - 1; i++)
        {
            pins[i].Dispose();
        }

        Assert.Equal((1, 0), (pool.GetStatistics().ReturnCount, pool.GetStatistics().CachedCount));
        pins[^1].Dispose();
        Assert.Equal((1, 1), (pool.GetStatistics().ReturnCount, pool.GetStatistics().CachedCount));
    }

    [Fact]
    public async Task A_pool_disposed_under_a_pipe_refuses_the_pipe_s_next_block_while_the_data_already_written_reads_back_intact_and_is_freed()
    {
        long live = AllocationLedger.LiveCount;
        var pool = new JemMemoryPool();
        var pipe = new Pipe(new PipeOptions(pool: pool, readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, pauseWriterThreshold: 0, minimumSegmentSize: 4096, useSynchronizationContext: false));
        for (int segment = 0; segment < 3; segment++)
        {
            pipe.Writer.GetSpan(4096)[..4096].Fill((byte)(segment + 1));
            pipe.Writer.Advance(4096);
        }

        Assert.False((await pipe.Writer.FlushAsync()).IsCanceled);
        pool.Dispose();

        Assert.Throws<ObjectDisposedException>(() => pipe.Writer.GetMemory(4096));
        Assert.True(pipe.Reader.TryRead(out ReadResult result));
        Assert.Equal(3 * 4096, result.Buffer.Length);
        byte[] read = result.Buffer.ToArray();
        for (int segment = 0; segment < 3; segment++)
        {
            Assert.False(read.AsSpan(segment * 4096, 4096).ContainsAnyExcept((byte)(segment + 1)));
        }

        pipe.Reader.AdvanceTo(result.Buffer.End);
        pipe.Reader.Complete();
        pipe.Writer.Complete();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((stats.RentCount, 0, 0), (stats.ReturnCount, stats.OutstandingBytes, stats.CachedCount));
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData(1, 0, 1)]
    [InlineData(3000, -1, 3000)]
    [InlineData(100, 70, 100)]
    [InlineData(32, 1, 32)]
    public void Blocks_cut_to_a_maximum_that_is_not_a_power_of_two_are_never_kept(int maxBufferSize, int request, int expected)
    {
        long live = AllocationLedger.LiveCount;
        using var pool = new JemMemoryPool(maxBufferSize: maxBufferSize, maxCachedBytes: long.MaxValue);
        for (int i = 0; i < 3; i++)
        {
            using IMemoryOwner<byte> owner = pool.Rent(request);
            Assert.Equal(expected, owner.Memory.Length);
            owner.Memory.Span.Fill(0xEE);
        }

        Assert.Equal(0, pool.GetStatistics().CachedCount);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_pool_of_unlimited_cache_keeps_at_most_its_per_size_count_and_a_rent_of_int_MaxValue_is_one_uncached_block()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        long live = AllocationLedger.LiveCount;
        using var pool = new JemMemoryPool(maxCachedBytes: long.MaxValue);
        var owners = Enumerable.Range(0, PooledBlockCache.MaxBlocksPerClass + 10).Select(_ => pool.Rent(64)).ToList();
        owners.ForEach(owner => owner.Dispose());
        Assert.Equal(PooledBlockCache.MaxBlocksPerClass, pool.GetStatistics().CachedCount);

        using (IMemoryOwner<byte> huge = pool.Rent(int.MaxValue))
        {
            Assert.Equal(int.MaxValue, huge.Memory.Length);
            huge.Memory.Span[^1] = 7;
            Assert.Equal(7, huge.Memory.Span[int.MaxValue - 1]);
        }

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((PooledBlockCache.MaxBlocksPerClass, 0), (stats.CachedCount, stats.OutstandingBytes));
        pool.Trim();
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void A_pool_dropped_with_its_dropped_owners_frees_its_kept_blocks_and_leaves_theirs_to_the_arena_s_reset()
    {
        // A span of a dropped owner's block may still be in use (a span keeps nothing alive), so a
        // finalized pool frees only the blocks it kept; an arena reset frees the others.
        LeavesLeaksToTheFinalizer();
        long live = AllocationLedger.LiveCount;
        var arena = new JemArena();
        DropPoolAndOwners(arena);
        Finalization.CollectAndFinalize();
        Assert.Equal(live + 4, AllocationLedger.LiveCount);

        arena.Reset();
        Assert.Equal(live, AllocationLedger.LiveCount);
        arena.Dispose();
    }

    /// <summary>A rent after the set-aside block went nowhere; the pool's dispose frees the set-aside block, which must not be that rent's.</summary>
    private static void AssertTheSetAsideBlockGoesToNoRentAndIsFreedWithThePool(JemMemoryPool pool, long live)
    {
        using (IMemoryOwner<byte> next = pool.Rent(4096))
        {
            pool.Dispose();
            next.Memory.Span.Fill(1);
            Assert.False(next.Memory.Span.ContainsAnyExcept((byte)1));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    /// <summary>
    /// Holds an owner (and a pin of it) and hands them to a static from its finalizer: the owner's own
    /// finalizer runs in the same round, so the test then holds an owner that was finalized, as the
    /// finalizer of any object that disposes its owner does.
    /// </summary>
    private sealed class Resurrector(IMemoryOwner<byte> owner, MemoryHandle pin)
    {
        private static IMemoryOwner<byte>? s_owner;
        private static MemoryHandle s_pin;

        ~Resurrector()
        {
            s_pin = pin;
            Volatile.Write(ref s_owner, owner);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void Drop(JemMemoryPool pool, bool pin)
        {
            IMemoryOwner<byte> owner = pool.Rent(4096);
            owner.Memory.Span.Fill(0x42);
            _ = new Resurrector(owner, pin ? owner.Memory.Pin() : default);
        }

        internal static (IMemoryOwner<byte> Owner, MemoryHandle Pin) TakeResurrected()
        {
            IMemoryOwner<byte>? owner = Interlocked.Exchange(ref s_owner, null);
            Assert.NotNull(owner);
            MemoryHandle pin = s_pin;
            s_pin = default;
            return (owner, pin);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropPoolAndOwners(JemArena arena)
    {
        var pool = new JemMemoryPool(arena: arena);
        for (int i = 0; i < 4; i++)
        {
            pool.Rent(8192).Memory.Span.Fill(1);
        }

        pool.Rent(4096).Dispose();
    }
}
