using System.Buffers;
using jemalloc.IO;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class JemMemoryPoolTests : LeakCheckedTest
{
    [Fact]
    public void Rent_from_a_clearing_pool_gives_a_zeroed_native_block_of_the_request_s_power_of_two_recorded_in_the_ledger()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        long before = AllocationLedger.LiveBytes;
        using (var pool = new JemMemoryPool(clearBlocks: true))
        {
            Assert.True(pool.ClearsBlocks);
            using (IMemoryOwner<byte> owner = pool.Rent(1000))
            {
                Assert.Equal(1024, owner.Memory.Length);
                Assert.All(owner.Memory.ToArray(), b => Assert.Equal(0, b));
                owner.Memory.Span.Fill(7);
                Assert.All(owner.Memory.ToArray(), b => Assert.Equal(7, b));
                Assert.Equal(before + 1024, AllocationLedger.LiveBytes);
                Assert.Contains(AllocationLedger.Snapshot(), a => a.Kind == AllocationKind.MemoryPoolBlock && a.Size == 1024);
            }

            // Returned, the block is kept for the next rent of its size: still live.
            Assert.Equal(before + 1024, AllocationLedger.LiveBytes);
            Assert.Equal((1, 1024), (pool.GetStatistics().CachedCount, pool.GetStatistics().CachedBytes));
        }

        Assert.Equal(before, AllocationLedger.LiveBytes);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public unsafe void A_kept_block_goes_to_the_next_rent_of_its_size_with_its_old_bytes_unless_the_pool_clears_blocks(bool clearBlocks)
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var pool = new JemMemoryPool(clearBlocks: clearBlocks);
        Assert.Equal(clearBlocks, pool.ClearsBlocks);
        nint first;
        using (IMemoryOwner<byte> owner = pool.Rent(1000))
        {
            using MemoryHandle pin = owner.Memory.Pin();
            first = (nint)pin.Pointer;
            owner.Memory.Span.Fill(0xAB);
        }

        for (int rent = 0; rent < 4; rent++)
        {
            using IMemoryOwner<byte> owner = pool.Rent(513 + (rent * 100));
            using MemoryHandle pin = owner.Memory.Pin();
            Assert.Equal(first, (nint)pin.Pointer);
            Assert.All(owner.Memory.ToArray(), b => Assert.Equal(clearBlocks ? 0 : 0xAB, b));
            owner.Memory.Span.Fill(0xAB);
        }

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(5, stats.RentCount);
        Assert.Equal(1, stats.CachedCount);
    }

    [Fact]
    public void A_memory_kept_past_its_owner_s_dispose_throws_even_after_its_block_went_to_the_next_rent()
    {
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> first = pool.Rent(4096);
        Memory<byte> stale = first.Memory;
        first.Dispose();

        using IMemoryOwner<byte> second = pool.Rent(4096);
        second.Memory.Span.Fill(0x11);
        Assert.Equal(0, pool.GetStatistics().CachedCount);
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => stale.Span.Fill(0x22));
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => stale.Pin());
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => first.Memory);
        first.Dispose();
        Assert.All(second.Memory.ToArray(), b => Assert.Equal(0x11, b));
        Assert.Equal(1, pool.GetStatistics().OutstandingCount);
    }

    [Fact]
    public void A_rent_of_a_kept_block_allocates_one_32_byte_owner_and_nothing_else_on_the_managed_heap()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        // The owner per rent is what makes a stale memory throw; the block's fixed facts are shared by
        // its rents, so a pipe's garbage per segment is one reference and a state word.
        const int Rents = 1000;
        using var pool = new JemMemoryPool();
        for (int i = 0; i < 100; i++)
        {
            pool.Rent(40_000).Dispose();
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Rents; i++)
        {
            pool.Rent(40_000).Dispose();
        }

        long perRent = (GC.GetAllocatedBytesForCurrentThread() - before) / Rents;
        Assert.Equal(32, perRent);
        Assert.Equal(1, pool.GetStatistics().CachedCount);
    }

    [Theory]
    [InlineData(1, int.MaxValue, 64)]
    [InlineData(64, int.MaxValue, 64)]
    [InlineData(65, int.MaxValue, 128)]
    [InlineData(4096, int.MaxValue, 4096)]
    [InlineData(4097, int.MaxValue, 8192)]
    [InlineData(40_000, int.MaxValue, 65_536)]
    [InlineData(3 << 20, int.MaxValue, 4 << 20)]
    [InlineData(600, 1000, 1000)]
    [InlineData(1000, 1000, 1000)]
    [InlineData(10, 40, 40)]
    [InlineData(1 << 30, int.MaxValue, 1 << 30)]
    [InlineData((1 << 30) + 1, (1 << 30) + 5, (1 << 30) + 5)]
    public void A_block_is_the_request_s_power_of_two_from_64_bytes_or_the_pool_s_maximum_below_it(int request, int maxBufferSize, int expected)
    {
        Assert.Equal(expected, PooledBlockCache.BlockSizeFor(request, maxBufferSize));
        if (expected <= 4 << 20)
        {
            using var pool = new JemMemoryPool(maxBufferSize: maxBufferSize);
            using IMemoryOwner<byte> owner = pool.Rent(request);
            Assert.Equal(expected, owner.Memory.Length);
            Assert.Equal(expected, pool.GetStatistics().RentedBytes);
        }
    }

    [Fact]
    public void Each_size_keeps_at_most_its_share_of_the_cache_limit_and_Trim_and_Dispose_free_what_is_kept()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        long before = AllocationLedger.LiveBytes;
        // 15 sizes (64 B to 1 MiB) share 15 * 2 * 64 KiB: two 64 KiB blocks, four 32 KiB blocks.
        var pool = new JemMemoryPool(maxCachedBytes: 15 * 2 * 65_536);
        Assert.Equal(15 * 2 * 65_536, pool.MaxCachedBytes);
        ReturnAll(pool, 5, 65_536);
        ReturnAll(pool, 5, 32_768);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((6, (2 * 65_536) + (4 * 32_768)), (stats.CachedCount, stats.CachedBytes));
        Assert.Equal(before + stats.CachedBytes, AllocationLedger.LiveBytes);

        pool.Trim();
        Assert.Equal((0, 0), (pool.GetStatistics().CachedCount, pool.GetStatistics().CachedBytes));
        Assert.Equal(before, AllocationLedger.LiveBytes);

        ReturnAll(pool, 1, 65_536);
        Assert.Equal(1, pool.GetStatistics().CachedCount);
        pool.Dispose();
        Assert.Equal(0, pool.GetStatistics().CachedCount);
        Assert.Equal(before, AllocationLedger.LiveBytes);

        static void ReturnAll(JemMemoryPool pool, int count, int size)
        {
            var owners = Enumerable.Range(0, count).Select(_ => pool.Rent(size)).ToList();
            owners.ForEach(owner => owner.Dispose());
        }
    }

    [Fact]
    public void A_pool_that_keeps_nothing_frees_every_returned_block_and_blocks_past_1_MiB_are_never_kept()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        long before = AllocationLedger.LiveBytes;
        using var keepsNothing = new JemMemoryPool(maxCachedBytes: 0);
        keepsNothing.Rent(4096).Dispose();
        Assert.Equal(0, keepsNothing.GetStatistics().CachedCount);
        Assert.Equal(before, AllocationLedger.LiveBytes);

        using var pool = new JemMemoryPool(maxCachedBytes: 1L << 40);
        pool.Rent((1 << 20) + 1).Dispose();
        Assert.Equal(0, pool.GetStatistics().CachedCount);
        Assert.Equal(before, AllocationLedger.LiveBytes);
        pool.Rent(1 << 20).Dispose();
        Assert.Equal(1, pool.GetStatistics().CachedCount);
    }

    [Fact]
    public void A_pool_dropped_without_dispose_frees_its_kept_blocks_when_finalized()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        LeavesLeaksToTheFinalizer();
        long before = AllocationLedger.LiveBytes;
        RentReturnAndDropPool();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.Equal(before, AllocationLedger.LiveBytes);

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static void RentReturnAndDropPool()
        {
            var pool = new JemMemoryPool();
            pool.Rent(8192).Dispose();
            Assert.Equal(1, pool.GetStatistics().CachedCount);
        }
    }

    [Fact]
    public void Rent_of_minus_one_gives_the_default_size_and_zero_gives_the_smallest_block()
    {
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> byDefault = pool.Rent();
        using IMemoryOwner<byte> zero = pool.Rent(0);
        Assert.Equal(JemMemoryPool.DefaultBufferSize, byDefault.Memory.Length);
        Assert.Equal(64, zero.Memory.Length);
    }

    [Theory]
    [InlineData(-2)]
    [InlineData(int.MinValue)]
    [InlineData(1025)]
    public void Rent_of_a_size_below_minus_one_or_above_the_maximum_throws(int size)
    {
        using var pool = new JemMemoryPool(maxBufferSize: 1024);
        Assert.Equal(1024, pool.MaxBufferSize);
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(size));
        Assert.Equal("minBufferSize", error.ParamName);
        Assert.Equal(0, pool.GetStatistics().RentCount);
    }

    [Fact]
    public void Constructor_refuses_a_non_positive_maximum_or_budget()
    {
        Assert.Equal("maxBufferSize", Assert.Throws<ArgumentOutOfRangeException>(() => new JemMemoryPool(maxBufferSize: 0)).ParamName);
        Assert.Equal("budgetBytes", Assert.Throws<ArgumentOutOfRangeException>(() => new JemMemoryPool(budgetBytes: 0)).ParamName);
        Assert.Equal("budgetBytes", Assert.Throws<ArgumentOutOfRangeException>(() => new JemMemoryPool(budgetBytes: -5)).ParamName);
        Assert.Equal("maxCachedBytes", Assert.Throws<ArgumentOutOfRangeException>(() => new JemMemoryPool(maxCachedBytes: -1)).ParamName);

        // The refused pools are finalized too: with nothing to free, they must not throw on the finalizer thread.
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    [Fact]
    public void Memory_span_and_pin_throw_once_the_owner_is_disposed_and_a_second_dispose_does_nothing()
    {
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(64);
        Memory<byte> kept = owner.Memory;
        owner.Dispose();
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => owner.Memory);
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => kept.Span.Length);
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => kept.Slice(8).Span.Length);
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => kept.Pin());
        DisposedMessages.AssertDisposed("JemMemoryPool block", () => kept.ToArray());
        owner.Dispose();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(1, stats.ReturnCount);
        Assert.Equal(0, stats.OutstandingBytes);
    }

    [Fact]
    public void A_pinned_block_disposed_is_counted_as_returned_at_once_and_goes_back_to_the_pool_at_the_last_unpin()
    {
        using var pool = new JemMemoryPool(maxCachedBytes: 0);
        long before = AllocationLedger.LiveBytes;
        IMemoryOwner<byte> owner = pool.Rent(256);
        owner.Memory.Span.Fill(0x5A);
        MemoryHandle first = owner.Memory.Pin();
        MemoryHandle second = owner.Memory.Slice(100).Pin();
        unsafe
        {
            Assert.Equal((nint)first.Pointer + 100, (nint)second.Pointer);
        }

        owner.Dispose();
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
        Assert.Equal(0, pool.GetStatistics().OutstandingBytes);

        // The native side that pinned it may still read it: the memory is live and intact.
        Assert.Equal(before + 256, AllocationLedger.LiveBytes);
        unsafe
        {
            Assert.Equal(0x5A, *(byte*)second.Pointer);
        }

        first.Dispose();
        Assert.Equal(before + 256, AllocationLedger.LiveBytes);
        second.Dispose();
        Assert.Equal(before, AllocationLedger.LiveBytes);
    }

    [Fact]
    public void A_direct_unpin_and_a_pin_outside_the_block_throw()
    {
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> owner = pool.Rent(16);
        Assert.Equal(64, owner.Memory.Length);
        var manager = Assert.IsAssignableFrom<MemoryManager<byte>>(owner);
        Assert.Throws<InvalidOperationException>(manager.Unpin);
        using (manager.Pin())
        {
            Assert.Throws<InvalidOperationException>(manager.Unpin);
        }

        Assert.Throws<ArgumentOutOfRangeException>(() => manager.Pin(65));
        Assert.Throws<ArgumentOutOfRangeException>(() => manager.Pin(-1));
        manager.Pin(64).Dispose();
    }

    [Fact]
    public void A_rented_or_pinned_block_refuses_a_reset_of_its_arena_and_a_reset_invalidates_the_kept_blocks()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        Assert.Same(arena, pool.Arena);
        IMemoryOwner<byte> owner = pool.Rent(4096);
        Assert.True(arena.UsedBytes >= 4096);
        using (owner.Memory.Pin())
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            owner.Memory.Span[0] = 1;
        }

        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal(1, owner.Memory.Span[0]);
        owner.Dispose();
        Assert.Equal(1, pool.GetStatistics().CachedCount);
        arena.Reset();
        Assert.Equal(0, pool.GetStatistics().CachedCount);
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
    }

    [Fact]
    public void A_kept_block_invalidated_by_an_arena_reset_is_skipped_and_kept_blocks_give_way_to_the_arena_s_budget()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var arena = new JemArena(budgetBytes: 96 << 10);
        using var pool = new JemMemoryPool(arena: arena);
        pool.Rent(4096).Dispose();
        Assert.Equal(1, pool.GetStatistics().CachedCount);
        arena.Reset();
        using (IMemoryOwner<byte> owner = pool.Rent(4096))
        {
            owner.Memory.Span.Fill(3);
            Assert.Equal(3, owner.Memory.Span[4095]);
            Assert.Equal(0, pool.GetStatistics().CachedCount);
        }

        // A kept 64 KiB block holds two thirds of the arena's budget: a 32 KiB rent needs it back.
        pool.Rent(65_536).Dispose();
        Assert.Equal(2, pool.GetStatistics().CachedCount);
        using IMemoryOwner<byte> big = pool.Rent(32_768);
        Assert.Equal(32_768, big.Memory.Length);
        Assert.Equal(0, pool.GetStatistics().CachedCount);
    }

    [Fact]
    public void A_block_disposed_while_pinned_is_kept_for_the_next_rent_only_after_its_last_unpin()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(4096);
        MemoryHandle pin = owner.Memory.Pin();
        owner.Dispose();
        Assert.Equal((1, 0), (pool.GetStatistics().ReturnCount, pool.GetStatistics().CachedCount));
        using (IMemoryOwner<byte> other = pool.Rent(4096))
        {
            unsafe
            {
                using MemoryHandle otherPin = other.Memory.Pin();
                Assert.NotEqual((nint)pin.Pointer, (nint)otherPin.Pointer);
            }
        }

        pin.Dispose();
        Assert.Equal(2, pool.GetStatistics().CachedCount);
    }

    [Fact]
    public void A_rent_past_the_budget_throws_and_returning_makes_room()
    {
        using var pool = new JemMemoryPool(budgetBytes: 12_300);
        Assert.Equal(12_300, pool.BudgetBytes);
        IMemoryOwner<byte> a = pool.Rent(6000);
        using IMemoryOwner<byte> b = pool.Rent(4000);
        var error = Assert.Throws<MemoryPoolBudgetExceededException>(() => pool.Rent(1));
        Assert.Equal(12_300, error.BudgetBytes);
        Assert.Equal(8192 + 4096, error.OutstandingBytes);
        Assert.Equal(64, error.RequestedBytes);
        Assert.IsAssignableFrom<OutOfMemoryException>(error);
        a.Dispose();
        using IMemoryOwner<byte> c = pool.Rent(6000);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(new JemMemoryPoolStatistics(3, 1, 8192 + 4096 + 8192, 8192, 0, 0, 0, 0), stats);
        Assert.Equal(8192 + 4096, stats.OutstandingBytes);
        Assert.Equal(2, stats.OutstandingCount);
    }

    [Fact]
    public void A_disposed_pool_refuses_rents_and_its_blocks_stay_usable_until_returned()
    {
        var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(32);
        pool.Dispose();
        Assert.True(pool.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(32));
        owner.Memory.Span[31] = 9;
        Assert.Equal(9, owner.Memory.Span[31]);
        owner.Dispose();
        Assert.Equal(0, pool.GetStatistics().OutstandingBytes);
    }

    [Fact]
    public void Concurrent_rents_and_returns_from_several_threads_keep_exact_counts()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        const int threads = 4;
        const int perThread = 2000;
        using var pool = new JemMemoryPool();
        long expectedBytes = 0;
        for (int i = 0; i < perThread; i++)
        {
            expectedBytes += PooledBlockCache.BlockSizeFor(Size(i), int.MaxValue);
        }

        // Each thread rents a batch and hands every other block to the next thread to return, so
        // blocks are returned on threads that did not rent them.
        var handOver = new System.Collections.Concurrent.BlockingCollection<IMemoryOwner<byte>>[threads];
        for (int t = 0; t < threads; t++)
        {
            handOver[t] = new();
        }

        Workers.Run(threads, t =>
        {
            for (int i = 0; i < perThread; i++)
            {
                IMemoryOwner<byte> owner = pool.Rent(Size(i));
                Span<byte> span = owner.Memory.Span;
                span.Fill((byte)t);
                Assert.Equal((byte)t, span[^1]);
                if (i % 2 == 0)
                {
                    owner.Dispose();
                    owner.Dispose();
                }
                else
                {
                    handOver[(t + 1) % threads].Add(owner);
                }
            }

            handOver[(t + 1) % threads].CompleteAdding();
            foreach (IMemoryOwner<byte> other in handOver[t].GetConsumingEnumerable())
            {
                other.Dispose();
            }
        });
        foreach (var collection in handOver)
        {
            collection.Dispose();
        }

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((threads * perThread, threads * perThread), (stats.RentCount, stats.ReturnCount));
        Assert.Equal((threads * expectedBytes, threads * expectedBytes), (stats.RentedBytes, stats.ReturnedBytes));
        Assert.Equal(0, stats.OutstandingBytes);
        Assert.InRange(stats.CachedCount, 1, 15 * PooledBlockCache.MaxBlocksPerClass);

        static int Size(int i) => 1 + (i * 37 % 5000);
    }
}
