using jemalloc.Interop;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A writer created with <see cref="AllocationOptions"/> allocates its block with them: huge pages
/// advised before the first touch, an arena's budget and reset rules, and a block handed over to an
/// array where it was written, without a copy.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterOptionsTests : LeakCheckedTest
{
    private const int MiB = 1 << 20;

    [Fact]
    public unsafe void With_huge_pages_the_block_is_aligned_and_advised_before_the_writes_and_handed_over_where_it_is()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode moves a resized block, and the hand-over resizes.
        using var writer = new NativeBufferWriter<long>(MiB, AllocationOptions.WithHugePages);
        Assert.Equal(MiB, writer.Capacity);
        Assert.Equal(0, writer.WrittenCount);
        nint address;
        fixed (long* first = writer.GetSpan(MiB))
        {
            address = (nint)first;
        }

        Assert.Equal(0, address % (2 * MiB));
        Assert.Equal(Smaps.HugePagesOnRequest, Smaps.AdvisedHuge(address, 8 * MiB));
        for (int done = 0; done < MiB; done += 4096)
        {
            Span<long> span = writer.GetSpan(4096);
            for (int i = 0; i < 4096; i++)
            {
                span[i] = done + i;
            }

            writer.Advance(4096);
        }

        // Written to the last element: the block is full, so the hand-over is in place.
        Assert.Equal(MiB, writer.Capacity);
        using HugeArray<long> detached = writer.DetachToHugeArray();
        Assert.Equal(address, detached.Pointer);
        Assert.Equal(MiB, detached.Length);
        Assert.Equal(0L, detached[0]);
        Assert.Equal(MiB - 1L, detached[MiB - 1]);
        Assert.Equal(0, writer.WrittenCount);
    }

    [Fact]
    public void Without_huge_pages_a_fresh_arena_s_block_is_not_advised()
    {
        // A new arena maps fresh memory, which no earlier advice in this process reached; an explicit
        // choice of 4 KiB pages is kept, not replaced by the policy that a writer without options follows.
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<byte>(8 * MiB, arena.Options);
        Assert.False(Smaps.AdvisedHuge(WrittenAddress(writer, 8 * MiB), 8 * MiB));
    }

    [Fact]
    public void In_an_arena_the_block_is_charged_to_its_budget_and_refunded_by_dispose()
    {
        using var arena = new JemArena(budgetBytes: MiB);
        var writer = new NativeBufferWriter<int>(1000, arena.Options);
        Assert.Equal(SizeClass(4000), arena.UsedBytes);
        writer.Dispose();
        Assert.Equal(0, arena.UsedBytes);

        Assert.Throws<ArenaBudgetExceededException>(() => new NativeBufferWriter<int>(MiB, arena.Options));
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void In_an_arena_a_writer_that_handed_out_a_span_refuses_the_arena_s_reset_until_it_hands_its_block_over()
    {
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<int>(100, arena.Options);
        writer.GetSpan(100).Fill(7);
        writer.Advance(100);

        InvalidOperationException refused = Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Contains("NativeBufferWriter", refused.Message);

        using (HugeArray<int> detached = writer.DetachToHugeArray())
        {
            Assert.Equal(100, detached.Length);
            Assert.Equal(7, detached[99]);
        }

        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void Options_made_from_an_arena_s_index_hold_what_the_writer_hands_out_as_the_arena_s_own_options_do()
    {
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<int>(100, new AllocationOptions(arena.Flags));
        writer.GetSpan(10).Fill(3);
        writer.Advance(10);
        Assert.Throws<InvalidOperationException>(arena.Reset);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    public void A_capacity_below_one_element_throws_ArgumentOutOfRangeException(long capacity)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<int>(capacity, AllocationOptions.WithHugePages));
        Assert.Equal("initialCapacity", error.ParamName);
    }

    [Fact]
    public void The_options_of_a_destroyed_arena_throw_ObjectDisposedException()
    {
        var arena = new JemArena();
        AllocationOptions options = arena.Options;
        arena.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeBufferWriter<int>(100, options));
    }

    private static unsafe nint WrittenAddress(NativeBufferWriter<byte> writer, int count)
    {
        writer.GetSpan(count).Fill(1);
        writer.Advance(count);
        fixed (byte* written = writer.GetWrittenSpan(0, 1))
        {
            return (nint)written;
        }
    }

    private static long SizeClass(nuint bytes) => (long)JemNative.Nallocx(bytes, 0);
}
