using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterDetachTests : LeakCheckedTest
{
    [Fact]
    public unsafe void A_full_block_becomes_the_HugeArray_s_memory_at_the_same_address_without_a_copy()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode moves every resized block, so the address would change.
        using var writer = new NativeBufferWriter<int>(initialCapacity: 1000);
        Write(writer, 1000);
        nint address;
        fixed (int* written = writer.WrittenSpan)
        {
            address = (nint)written;
        }

        using HugeArray<int> array = writer.DetachToHugeArray();
        Assert.Equal(address, array.Pointer);
        Assert.Equal(1000, array.Length);
        Assert.Equal(999, array[999]);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == address);
        Assert.Equal(AllocationKind.HugeBuffer, info.Kind);
        Assert.Equal((nuint)4000, info.Size);
    }

    [Fact]
    public void The_block_is_shrunk_to_the_written_elements_and_the_writer_starts_again_empty_and_usable()
    {
        long liveBytes = AllocationLedger.LiveBytes;
        using var writer = new NativeBufferWriter<int>(initialCapacity: 4096);
        Write(writer, 300);
        Memory<int> before = writer.GetMemory(10);
        ReadOnlySequence<int> sequence = writer.WrittenSequence;

        using SafeArray<int> array = writer.DetachToSafeArray();
        Assert.Equal(300, array.Length);
        Assert.Equal(Enumerable.Range(0, 300), array.ToArray());
        Assert.Equal(liveBytes + 1200, AllocationLedger.LiveBytes);
        Assert.Equal(0, writer.WrittenCount);
        Assert.Equal(0, writer.Capacity);
        Assert.Throws<InvalidOperationException>(() => before.Span.Length);
        Assert.Throws<InvalidOperationException>(() => sequence.FirstSpan.Length);

        Write(writer, 5);
        Assert.Equal([0, 1, 2, 3, 4], writer.WrittenSpan.ToArray());
        Assert.Equal(299, array[299]);
    }

    [Fact]
    public void Detaching_refuses_an_empty_disposed_pinned_or_busy_writer_and_leaves_it_unchanged()
    {
        Assert.Throws<ArgumentNullException>(() => NativeBufferWriterExtensions.DetachToHugeArray<int>(null!));
        Assert.Throws<ArgumentNullException>(() => NativeBufferWriterExtensions.DetachToSafeArray<int>(null!));

        using var writer = new NativeBufferWriter<byte>(64);
        Assert.Throws<InvalidOperationException>(() => writer.DetachToHugeArray());
        Assert.Throws<InvalidOperationException>(() => writer.DetachToSafeArray());

        // Pinned, with a shrink to make and with none.
        writer.GetSpan(32).Fill(7);
        writer.Advance(32);
        using (MemoryHandle pin = writer.GetMemory(1).Pin())
        {
            Assert.Throws<InvalidOperationException>(() => writer.DetachToSafeArray());
        }

        writer.Advance(32);
        Assert.Equal(writer.Capacity, writer.WrittenCount);
        using (writer.WrittenSequence.First.Pin())
        {
            Assert.Throws<InvalidOperationException>(() => writer.DetachToHugeArray());
        }

        Assert.Equal(64, writer.WrittenCount);

        // A stream's operation holds the block: the shrink is refused, nothing moves.
        writer.ResetWrittenCount();
        writer.Advance(10);
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        var refusals = new List<Exception>();
        stream.CopyTo(new CallbackStream(() => refusals.Add(Assert.ThrowsAny<Exception>(() => writer.DetachToSafeArray()))));
        Assert.IsType<InvalidOperationException>(Assert.Single(refusals));
        Assert.Equal(10, writer.WrittenCount);
        Assert.Equal(64, writer.Capacity);
        Assert.Equal([7, 7, 7, 7, 7, 7, 7, 7, 7, 7], writer.WrittenSpan.ToArray());

        using SafeArray<byte> array = writer.DetachToSafeArray();
        Assert.Equal(10, array.Length);
        writer.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.DetachToHugeArray());
    }

    private static void Write(NativeBufferWriter<int> writer, int count)
    {
        for (int i = 0; i < count; i++)
        {
            writer.GetSpan(1)[0] = i;
            writer.Advance(1);
        }
    }
}
