using jemalloc.Ledger;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Arenas;

/// <summary>
/// A checked-mode <see cref="JemArena.Dispose"/> marks the arena destroyed at once but destroys
/// jemalloc's arena only when the quarantine lets its last block go. Meanwhile the arena still exists
/// in jemalloc, and its stale options must be refused as after any dispose: an allocation let through
/// would land in an arena about to be destroyed under it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class JemArenaCheckedDisposeTests : LeakCheckedTest
{
    [Fact]
    public void Options_of_an_arena_whose_destruction_waits_for_the_quarantine_are_refused()
    {
        using CheckedModeScope scope = CheckedModeScope.On();
        var arena = new JemArena();
        AllocationOptions options = arena.Options;
        new FixedBuffer<byte>(64, options).Free();
        int pendingBefore = Quarantine.PendingDestroyCount;

        arena.Dispose();

        // The freed buffer is still held, so jemalloc's arena is not destroyed yet.
        Assert.Equal(pendingBefore + 1, Quarantine.PendingDestroyCount);
        Assert.True(arena.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => new FixedBuffer<byte>(64, options));
        Assert.Throws<ObjectDisposedException>(() => new SafeArray<int>(16, options));
        Assert.Equal(pendingBefore + 1, Quarantine.PendingDestroyCount);
    }

    [Fact]
    public void A_pool_whose_arena_s_destruction_waits_for_the_quarantine_refuses_rents()
    {
        using CheckedModeScope scope = CheckedModeScope.On();
        var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        pool.Rent(4096).Dispose();
        int pendingBefore = Quarantine.PendingDestroyCount;

        arena.Dispose();

        Assert.Equal(pendingBefore + 1, Quarantine.PendingDestroyCount);
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(4096));
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(3 << 20));
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal((1L, 1L, 0L), (stats.RentCount, stats.ReturnCount, stats.OutstandingBytes));
    }
}
