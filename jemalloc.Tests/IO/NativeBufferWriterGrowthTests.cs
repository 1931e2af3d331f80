using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A growth that moves a <see cref="NativeBufferWriter{T}"/>'s block never frees memory a span or
/// memory handed out before it may still read (on this thread or another): the old block is kept,
/// as a stale snapshot, until the writer hands its block over or is disposed, as an
/// <see cref="ArrayBufferWriter{T}"/>'s old array stays readable. The blocks kept are bounded by the
/// doubling growth, and a growth nothing was handed out before (a stream's own writes) keeps none.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class NativeBufferWriterGrowthTests : LeakCheckedTest
{
    [Fact]
    public void A_written_span_taken_before_a_growth_still_reads_allocated_memory_with_the_old_elements()
    {
        using var writer = new NativeBufferWriter<GrowthProbe>(8);
        Fill(writer, 8, 0);
        ReadOnlySpan<GrowthProbe> before = writer.WrittenSpan;
        nint oldAddress = AddressOf(before);

        writer.GetSpan(1 << 16); // must move: a small block cannot grow in place to 512 KiB
        nint newAddress = AddressOf(writer.WrittenSpan);

        Assert.NotEqual(oldAddress, newAddress);
        Assert.True(IsLiveAllocation(oldAddress, 8 * sizeof(GrowthProbe)), "The block a span was taken of was freed by the growth.");
        for (int i = 0; i < before.Length; i++)
        {
            Assert.Equal(i, before[i].Value);
        }
    }

    [Fact]
    public void A_span_of_a_checked_memory_taken_on_another_thread_before_a_growth_stays_allocated()
    {
        using var writer = new NativeBufferWriter<GrowthProbe>(8);
        Fill(writer, 8, 0);
        ReadOnlyMemory<GrowthProbe> written = writer.WrittenSequence.First;
        nint spanAddress = 0;
        var reader = new Thread(() => spanAddress = AddressOf(written.Span));
        reader.Start();
        Assert.True(reader.Join(TimeSpan.FromSeconds(30)), "The reader thread did not finish.");
        Assert.NotEqual(0, spanAddress);

        writer.GetSpan(1 << 16);

        Assert.True(IsLiveAllocation(spanAddress, 8 * sizeof(GrowthProbe)), "The block the other thread's span points into was freed by the growth.");
        // The memory itself is checked: after the growth it refuses instead of reaching the old block.
        Assert.Throws<InvalidOperationException>(() => written.Span.Length);
    }

    [Fact]
    public void Blocks_kept_by_growths_are_bounded_by_the_doubling_and_freed_by_Dispose()
    {
        var writer = new NativeBufferWriter<GrowthProbe>();
        try
        {
            for (int i = 0; i < 12; i++)
            {
                writer.GetSpan(1);
                writer.Advance(1);
                writer.GetSpan((int)writer.Capacity); // doubles, after a span was handed out
            }

            long capacityBytes = writer.Capacity * sizeof(GrowthProbe);
            long keptBytes = ProbeBytes() - capacityBytes;
            Assert.True(keptBytes > 0, "No old block was kept by the growths.");
            Assert.True(keptBytes <= capacityBytes, $"{keptBytes:N0} bytes of old blocks kept beside a block of {capacityBytes:N0}.");
        }
        finally
        {
            writer.Dispose();
        }

        Assert.Equal(0, ProbeBytes());
    }

    [Fact]
    public void A_hand_over_frees_the_blocks_kept_by_growths()
    {
        using var writer = new NativeBufferWriter<GrowthProbe>(8);
        Fill(writer, 8, 0);
        _ = writer.WrittenSpan;
        writer.GetSpan(1 << 16);
        Fill(writer, 8, 8);
        Assert.True(ProbeBytes() > writer.Capacity * sizeof(GrowthProbe), "The growth kept no old block.");

        using HugeArray<GrowthProbe> array = writer.DetachToHugeArray();

        Assert.Equal(array.Length * sizeof(GrowthProbe), ProbeBytes());
        Assert.Equal(15, array[15].Value);
    }

    [Fact]
    public void A_growth_after_nothing_was_handed_out_keeps_no_old_block()
    {
        using var writer = new NativeBufferWriter<byte>(16);
        using (var stream = new NativeMemoryStream(writer, leaveOpen: true))
        {
            byte[] chunk = new byte[1000];
            for (int i = 0; i < 200; i++)
            {
                stream.Write(chunk);
            }
        }

        // Stream writes hand nothing out: the growths resized in place or freed the old block, so the
        // writer's block is its one allocation (this collection runs alone).
        AllocationInfo[] blocks = AllocationLedger.Snapshot().Where(info => info.Kind == AllocationKind.BufferWriter).ToArray();
        Assert.Equal(200_000, writer.WrittenCount);
        AllocationInfo block = Assert.Single(blocks);
        Assert.Equal((nuint)writer.Capacity, block.Size);
    }

    private static void Fill(NativeBufferWriter<GrowthProbe> writer, int count, int first)
    {
        Span<GrowthProbe> span = writer.GetSpan(count);
        for (int i = 0; i < count; i++)
        {
            span[i] = new GrowthProbe(first + i);
        }

        writer.Advance(count);
    }

    private static nint AddressOf(ReadOnlySpan<GrowthProbe> span) => (nint)Unsafe.AsPointer(ref MemoryMarshal.GetReference(span));

    private static bool IsLiveAllocation(nint address, int bytes) =>
        AllocationLedger.Snapshot().Any(info => info.Address <= address && address + bytes <= info.Address + (nint)info.Size);

    /// <summary>The bytes of every live allocation of this test's element type (no other test uses it).</summary>
    private static long ProbeBytes() =>
        AllocationLedger.Snapshot().Where(info => info.ElementType == typeof(GrowthProbe)).Sum(info => (long)info.Size);

    private readonly record struct GrowthProbe(long Value);
}
