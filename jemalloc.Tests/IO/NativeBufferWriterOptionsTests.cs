using jemalloc.Interop;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary><see cref="NativeBufferWriter{T}(long, AllocationOptions)"/>: an arena's options behave as the arena itself, and huge pages or defaults as given.</summary>
[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterOptionsTests : LeakCheckedTest
{
    [Fact]
    public void An_arenas_options_charge_its_budget_and_hold_handed_out_blocks_against_a_reset()
    {
        using var arena = new JemArena(budgetBytes: 1 << 20);
        var writer = new NativeBufferWriter<long>(1000, arena.Options);
        Assert.Equal((long)JemNative.Nallocx(8000, 0), arena.UsedBytes);
        writer.GetSpan(10).Fill(7);
        writer.Advance(10);
        // A span went out: the block is held, so a reset cannot free it under that span.
        Assert.Throws<InvalidOperationException>(arena.Reset);
        using (HugeArray<long> detached = writer.DetachToHugeArray())
        {
            Assert.Equal(10, detached.Length);
            Assert.Equal(7, detached[9]);
        }

        writer.Dispose();
        Assert.Equal(0, arena.UsedBytes);
        arena.Reset();
    }

    [Fact]
    public void A_capacity_past_the_arena_budget_throws_and_allocates_nothing()
    {
        using var arena = new JemArena(budgetBytes: 64 << 10);
        Assert.Throws<ArenaBudgetExceededException>(() => new NativeBufferWriter<byte>(1 << 20, arena.Options));
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void The_options_of_a_destroyed_arena_are_refused()
    {
        var arena = new JemArena();
        AllocationOptions options = arena.Options;
        arena.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeBufferWriter<byte>(16, options));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void A_capacity_below_one_is_refused(long capacity)
    {
        Assert.Equal("initialCapacity", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(capacity, AllocationOptions.Default)).ParamName);
    }

    [Fact]
    public void Huge_page_options_and_defaults_write_and_hand_over_as_any_writer()
    {
        foreach (AllocationOptions options in new[] { AllocationOptions.WithHugePages, AllocationOptions.Default })
        {
            using var writer = new NativeBufferWriter<int>(4 << 20, options);
            Assert.Equal(4 << 20, writer.Capacity);
            for (int i = 0; i < 100; i++)
            {
                Span<int> span = writer.GetSpan(100_000);
                span[..100_000].Fill(i);
                writer.Advance(100_000);
            }

            using HugeArray<int> array = writer.DetachToHugeArray();
            Assert.Equal(10_000_000, array.Length);
            Assert.Equal(99, array[9_999_999]);
            Assert.Equal(0, writer.WrittenCount);
        }
    }
}
