using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class JemMemoryPoolTests : LeakCheckedTest
{
    [Fact]
    public void Rent_from_a_clearing_pool_gives_a_zeroed_native_block_of_the_requested_size_recorded_in_the_ledger()
    {
        using var pool = new JemMemoryPool(clearBlocks: true);
        Assert.True(pool.ClearsBlocks);
        long before = AllocationLedger.LiveBytes;
        using (IMemoryOwner<byte> owner = pool.Rent(1000))
        {
            Assert.Equal(1000, owner.Memory.Length);
            Assert.All(owner.Memory.ToArray(), b => Assert.Equal(0, b));
            owner.Memory.Span.Fill(7);
            Assert.All(owner.Memory.ToArray(), b => Assert.Equal(7, b));
            Assert.Equal(before + 1000, AllocationLedger.LiveBytes);
        }

        Assert.Equal(before, AllocationLedger.LiveBytes);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public unsafe void A_reused_block_keeps_its_old_bytes_unless_the_pool_clears_blocks(bool clearBlocks)
    {
        using var pool = new JemMemoryPool(clearBlocks: clearBlocks);
        Assert.Equal(clearBlocks, pool.ClearsBlocks);
        nint previous = 0;
        int reused = 0;
        for (int attempt = 0; attempt < 16; attempt++)
        {
            using IMemoryOwner<byte> owner = pool.Rent(1000);
            using MemoryHandle pin = owner.Memory.Pin();
            if ((nint)pin.Pointer == previous)
            {
                // jemalloc's thread cache gives this thread back the block it just freed.
                reused++;
                Assert.All(owner.Memory.ToArray(), b => Assert.Equal(clearBlocks ? 0 : 0xAB, b));
            }

            owner.Memory.Span.Fill(0xAB);
            previous = (nint)pin.Pointer;
        }

        Assert.True(reused > 0, "jemalloc never gave a freed block back to this thread.");
    }

    [Fact]
    public void Rent_of_minus_one_gives_the_default_size_and_zero_gives_one_byte()
    {
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> byDefault = pool.Rent();
        using IMemoryOwner<byte> zero = pool.Rent(0);
        Assert.Equal(JemMemoryPool.DefaultBufferSize, byDefault.Memory.Length);
        Assert.Equal(1, zero.Memory.Length);
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
    }

    [Fact]
    public void Memory_span_and_pin_throw_once_the_owner_is_disposed_and_a_second_dispose_does_nothing()
    {
        using var pool = new JemMemoryPool();
        IMemoryOwner<byte> owner = pool.Rent(64);
        Memory<byte> kept = owner.Memory;
        owner.Dispose();
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
        Assert.Throws<ObjectDisposedException>(() => kept.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => kept.Slice(8).Span.Length);
        Assert.Throws<ObjectDisposedException>(() => kept.Pin());
        Assert.Throws<ObjectDisposedException>(() => kept.ToArray());
        owner.Dispose();
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(1, stats.ReturnCount);
        Assert.Equal(0, stats.OutstandingBytes);
    }

    [Fact]
    public void A_pinned_block_disposed_is_returned_at_once_and_freed_by_the_last_unpin()
    {
        using var pool = new JemMemoryPool();
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
    public void An_unpin_without_a_pin_and_a_pin_outside_the_block_throw()
    {
        using var pool = new JemMemoryPool();
        using IMemoryOwner<byte> owner = pool.Rent(16);
        var manager = Assert.IsAssignableFrom<MemoryManager<byte>>(owner);
        Assert.Throws<InvalidOperationException>(manager.Unpin);
        Assert.Throws<ArgumentOutOfRangeException>(() => manager.Pin(17));
        Assert.Throws<ArgumentOutOfRangeException>(() => manager.Pin(-1));
        manager.Pin(16).Dispose();
    }

    [Fact]
    public void A_pinned_block_refuses_a_reset_of_its_arena_and_a_reset_invalidates_unpinned_blocks()
    {
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        Assert.Same(arena, pool.Arena);
        using IMemoryOwner<byte> owner = pool.Rent(4096);
        Assert.True(arena.UsedBytes >= 4096);
        using (owner.Memory.Pin())
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            owner.Memory.Span[0] = 1;
        }

        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
    }

    [Fact]
    public void A_rent_past_the_budget_throws_and_returning_makes_room()
    {
        using var pool = new JemMemoryPool(budgetBytes: 10_000);
        Assert.Equal(10_000, pool.BudgetBytes);
        IMemoryOwner<byte> a = pool.Rent(6000);
        using IMemoryOwner<byte> b = pool.Rent(4000);
        var error = Assert.Throws<MemoryPoolBudgetExceededException>(() => pool.Rent(1));
        Assert.Equal(10_000, error.BudgetBytes);
        Assert.Equal(10_000, error.OutstandingBytes);
        Assert.Equal(1, error.RequestedBytes);
        Assert.IsAssignableFrom<OutOfMemoryException>(error);
        a.Dispose();
        using IMemoryOwner<byte> c = pool.Rent(6000);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(new JemMemoryPoolStatistics(3, 1, 16_000, 6000), stats);
        Assert.Equal(10_000, stats.OutstandingBytes);
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
        const int threads = 4;
        const int perThread = 2000;
        using var pool = new JemMemoryPool();
        long expectedBytes = 0;
        for (int i = 0; i < perThread; i++)
        {
            expectedBytes += Size(i);
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
        Assert.Equal(new JemMemoryPoolStatistics(threads * perThread, threads * perThread, threads * expectedBytes, threads * expectedBytes), stats);
        Assert.Equal(0, stats.OutstandingBytes);

        static int Size(int i) => 1 + (i * 37 % 5000);
    }
}
