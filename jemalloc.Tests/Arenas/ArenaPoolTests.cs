using jemalloc.ArenaBooks;
using jemalloc.Interop;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Arenas;

/// <summary>
/// A disposed <see cref="JemArena"/>'s jemalloc arena is reset, purged and kept for the next one
/// (<see cref="ArenaPool"/>): the next owner must find nothing of the previous one in it (allocations,
/// budget, statistics, settings, huge-page advice), the previous owner's structures and options must
/// keep throwing, and no raw mallctl call may reset or destroy it while it waits. Alone in its
/// collection: another test's <c>new JemArena()</c> would take the arena these tests expect back.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class ArenaPoolTests : LeakCheckedTest
{
    private const nuint FourMiB = 4 << 20;

    [Fact]
    public void The_next_JemArena_gets_the_disposed_arena_with_nothing_of_its_previous_owner()
    {
        using CheckedModeScope scope = CheckedModeScope.Off();
        var first = new JemArena(budgetBytes: 64 << 20);
        uint index = first.Index;
        nuint freshOversize = Jem.GetMallctl<nuint>($"arena.{index}.oversize_threshold");
        // Without opt.retain (Windows) jemalloc has no retained-growth limit to read or set.
        bool retain = Jem.GetMallctl<bool>("opt.retain");
        nuint freshGrowLimit = retain ? Jem.GetMallctl<nuint>($"arena.{index}.retain_grow_limit") : 0;
        string? defaultDss = Jem.GetMallctlString($"arena.{MallctlKeys.AllArenas}.dss");
        AllocationOptions options = first.Options;
        var buffer = new FixedBuffer<long>(1000, options);
        var array = first.CreateArray<int>(1_000_000);
        _ = first.Allocate(100);
        _ = first.Allocate(FourMiB);
        first.DirtyDecayMilliseconds = 1234;
        first.MuzzyDecayMilliseconds = 567;
        Jem.SetMallctl($"arena.{index}.oversize_threshold", freshOversize / 2);
        if (retain)
        {
            Jem.SetMallctl($"arena.{index}.retain_grow_limit", (nuint)(64 << 20));
        }

        Jem.SetMallctlString($"arena.{index}.dss", "disabled");
        ArenaStatistics used = first.GetStatistics();
        Assert.True(used.SmallAllocations > 0 && used.LargeAllocations > 0, used.ToString());

        first.Dispose();

        Assert.True(ArenaPool.Holds(index));
        using var second = new JemArena();
        Assert.Equal(index, second.Index);
        Assert.False(ArenaPool.Holds(index));
        Assert.Equal(0, second.UsedBytes);
        Assert.Equal(0, second.PeakBytes);
        Assert.Null(second.BudgetBytes);
        Assert.Equal((long)Jem.GetMallctl<nint>("arenas.dirty_decay_ms"), second.DirtyDecayMilliseconds);
        Assert.Equal((long)Jem.GetMallctl<nint>("arenas.muzzy_decay_ms"), second.MuzzyDecayMilliseconds);
        Assert.Equal(freshOversize, Jem.GetMallctl<nuint>($"arena.{index}.oversize_threshold"));
        Assert.Equal(freshGrowLimit, retain ? Jem.GetMallctl<nuint>($"arena.{index}.retain_grow_limit") : 0);
        Assert.Equal(defaultDss, Jem.GetMallctlString($"arena.{index}.dss"));
        ArenaStatistics fresh = second.GetStatistics();
        Assert.Equal((0L, 0L, 0L, 0L, 0L, 0L), (fresh.ActiveBytes, fresh.DirtyBytes, fresh.MuzzyBytes, fresh.SmallAllocatedBytes, fresh.LargeAllocatedBytes, (long)fresh.ThreadCount));
        Assert.Equal((0UL, 0UL, 0UL, 0UL), (fresh.SmallAllocations, fresh.SmallDeallocations, fresh.LargeAllocations, fresh.LargeDeallocations));

        // The previous owner's structures and options still throw, though the index serves the new arena.
        Assert.Throws<ObjectDisposedException>(() => buffer[0]);
        Assert.Throws<ObjectDisposedException>(() => array[0]);
        Assert.Throws<ObjectDisposedException>(() => new FixedBuffer<byte>(8, options));
        Assert.Throws<ObjectDisposedException>(() => first.Options);
        Assert.Throws<ObjectDisposedException>(() => first.DirtyDecayMilliseconds);
        array.Dispose(); // Nothing is freed twice.

        // The new owner's own use is counted from zero.
        var own = second.CreateBuffer<byte>(64);
        Assert.Equal((long)JemNative.Nallocx(64, second.Flags), second.UsedBytes);
        own.Free();
        Assert.Equal(0, second.UsedBytes);
        ArenaStatistics counted = second.GetStatistics();
        Assert.Equal((1UL, 1UL), (counted.SmallAllocations, counted.SmallDeallocations));
    }

    [Fact]
    public void A_budget_is_the_new_owner_s_not_the_previous_one_s()
    {
        // Pooled at once, as a dispose outside checked mode does (the checked dispose waits: its own test).
        using CheckedModeScope scope = CheckedModeScope.Off();
        var first = new JemArena(budgetBytes: 4096);
        uint index = first.Index;
        first.Dispose();
        using var second = new JemArena(budgetBytes: 1 << 20);
        Assert.Equal(index, second.Index);
        Assert.Equal(1 << 20, second.BudgetBytes);
        var buffer = second.CreateBuffer<byte>(100_000); // Over the previous owner's budget.
        buffer.Free();
    }

    [Fact]
    public void An_idle_pooled_arena_cannot_be_reset_destroyed_moved_onto_or_allocated_in_through_its_old_flags()
    {
        using CheckedModeScope scope = CheckedModeScope.Off();
        var first = new JemArena();
        uint index = first.Index;
        MallocxFlags flags = first.Flags;
        first.Dispose();
        Assert.True(ArenaPool.Holds(index));

        MallctlException reset = Assert.Throws<MallctlException>(() => MallctlKeys.Arena(index).Reset.Run());
        Assert.Contains("kept idle", reset.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => MallctlKeys.Arena(index).Destroy.Run());
        Assert.Throws<MallctlException>(() => Jem.Mallctl($"arena.{index}.destroy", null, null, null, 0));
        Assert.Throws<MallctlException>(() => Jem.MallctlCommand($"arena.{index}.reset"));
        Assert.Throws<MallctlException>(() => MallctlKeys.Thread.Arena.Set(index));
        Assert.Throws<ObjectDisposedException>(() => new FixedBuffer<byte>(8, new AllocationOptions(flags)));

        // Still there, and still whole, for the next owner.
        Assert.True(ArenaPool.Holds(index));
        using var second = new JemArena();
        Assert.Equal(index, second.Index);
        var buffer = second.CreateBuffer<byte>(64);
        buffer[3] = 7;
        Assert.Equal(7, buffer[3]);
        buffer.Free();
    }

    [LinuxOnlyFact("/proc/self/smaps")]
    public void An_arena_advised_for_huge_pages_is_not_handed_to_an_owner_without_them()
    {
        using CheckedModeScope scope = CheckedModeScope.Off();
        var first = new JemArena(hugePages: true);
        uint index = first.Index;
        void* advised = first.Allocate(FourMiB);
        Assert.Equal(Smaps.HugePagesOnRequest, Smaps.AdvisedHuge((nint)advised, (long)FourMiB));
        first.Dispose();
        // The advice stays on the arena's address ranges, and nothing sets them back to the kernel's default.
        Assert.Equal(!Smaps.HugePagesOnRequest, ArenaPool.Holds(index));

        using var second = new JemArena();
        Assert.False(second.HugePages);
        // Aligned as the advised block was, so that it would land on the same pages if the arena were reused.
        void* memory = second.Allocate(FourMiB, 2 << 20);
        Assert.False(Smaps.AnyAdvisedHuge((nint)memory, (long)FourMiB));
        second.Free(memory);
    }

    [LinuxOnlyFact("/proc/self/smaps")]
    public void A_pooled_arena_handed_to_an_owner_with_huge_pages_gives_them()
    {
        using CheckedModeScope scope = CheckedModeScope.Off();
        var first = new JemArena();
        uint index = first.Index;
        void* plain = first.Allocate(FourMiB);
        Assert.False(Smaps.AdvisedHuge((nint)plain, (long)FourMiB));
        first.Dispose();
        Assert.True(ArenaPool.Holds(index));

        using var second = new JemArena(hugePages: true);
        Assert.Equal(index, second.Index);
        Assert.True(second.HugePages);
        void* memory = second.Allocate(FourMiB);
        Assert.Equal(Smaps.HugePagesOnRequest, Smaps.AdvisedHuge((nint)memory, (long)FourMiB));
        second.Free(memory);
        second.Dispose();
        Assert.Equal(!Smaps.HugePagesOnRequest, ArenaPool.Holds(index));
    }

    [Fact]
    public void The_pool_keeps_at_most_its_capacity_and_destroys_the_rest()
    {
        using CheckedModeScope scope = CheckedModeScope.Off();
        var arenas = Enumerable.Range(0, ArenaPool.Capacity + 8).Select(_ => new JemArena()).ToList();
        uint[] indices = arenas.Select(a => a.Index).ToArray();
        foreach (JemArena arena in arenas)
        {
            arena.Dispose();
        }

        Assert.Equal(ArenaPool.Capacity, ArenaPool.Count);
        uint[] destroyed = indices.Where(i => !ArenaPool.Holds(i)).ToArray();
        Assert.Equal(8, destroyed.Length);
        // jemalloc's arena is gone: no decay time to read (EFAULT), and the policy no longer protects it.
        Assert.All(destroyed, i => Assert.Throws<MallctlException>(() => MallctlKeys.Arena(i).DirtyDecayMs.Get()));
    }

    [Fact]
    public void A_checked_mode_dispose_pools_the_arena_only_once_the_quarantine_lets_its_blocks_go()
    {
        using CheckedModeScope scope = CheckedModeScope.On();
        var first = new JemArena();
        uint index = first.Index;
        new FixedBuffer<byte>(64, first.Options).Free();
        first.Dispose();

        Assert.False(ArenaPool.Holds(index));
        // Waiting for the quarantine, the arena is still the library's: a raw reset would free the held block twice.
        Assert.Throws<MallctlException>(() => MallctlKeys.Arena(index).Reset.Run());

        AllocationLedger.FlushQuarantine();
        Assert.True(ArenaPool.Holds(index));
        using var second = new JemArena();
        Assert.Equal(index, second.Index);
        Assert.Equal(0UL, second.GetStatistics().SmallAllocations);
    }
}
