using System.Buffers;
using System.Runtime.InteropServices;
using System.Text.Json;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterTests : LeakCheckedTest
{
    [Fact]
    public void Utf8JsonWriter_output_is_byte_for_byte_that_of_ArrayBufferWriter()
    {
        var expected = new ArrayBufferWriter<byte>();
        using var actual = new NativeBufferWriter<byte>();
        WriteDocument(expected);
        WriteDocument(actual);
        Assert.True(actual.WrittenCount > 200_000, $"The document has {actual.WrittenCount:N0} bytes.");
        Assert.Equal(expected.WrittenCount, actual.WrittenCount);
        Assert.True(expected.WrittenSpan.SequenceEqual(actual.WrittenSpan));

        static void WriteDocument(IBufferWriter<byte> output)
        {
            using var json = new Utf8JsonWriter(output);
            json.WriteStartArray();
            for (int i = 0; i < 5000; i++)
            {
                json.WriteStartObject();
                json.WriteNumber("id", i);
                json.WriteString("name", $"record \u00e9 {i}");
                json.WriteBoolean("even", i % 2 == 0);
                json.WriteNumber("ratio", i / 7.0);
                json.WriteEndObject();
            }

            json.WriteEndArray();
        }
    }

    [Fact]
    public void The_block_is_recorded_in_the_ledger_grows_keeping_the_written_data_and_is_freed_by_dispose()
    {
        long liveBytes = AllocationLedger.LiveBytes;
        var writer = new NativeBufferWriter<int>(initialCapacity: 10);
        Assert.Equal(10, writer.Capacity);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Kind == AllocationKind.BufferWriter);
        Assert.Equal((nuint)40, info.Size);
        for (int i = 0; i < 100_000; i++)
        {
            writer.GetSpan(1)[0] = i;
            writer.Advance(1);
        }

        Assert.Equal(100_000, writer.WrittenCount);
        Assert.True(writer.Capacity >= 100_000);
        Assert.Equal(writer.Capacity - 100_000, writer.FreeCapacity);
        // The block, and the old blocks its growths kept (spans were handed out before each): fewer
        // bytes than the block, with the doubling growth.
        long held = AllocationLedger.LiveBytes - liveBytes;
        Assert.InRange(held, writer.Capacity * 4, 2 * writer.Capacity * 4);
        Assert.Equal(Enumerable.Range(0, 100_000), writer.WrittenSpan.ToArray());
        Assert.Equal([500, 501, 502], writer.GetWrittenSpan(500, 3).ToArray());
        writer.Dispose();
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
    }

    [Fact]
    public void GetSpan_and_GetMemory_give_at_least_the_hint_and_advance_writes_what_was_filled()
    {
        using var writer = new NativeBufferWriter<byte>();
        Assert.Equal(0, writer.Capacity);
        Span<byte> span = writer.GetSpan();
        Assert.True(span.Length >= 1);
        span[0] = 1;
        writer.Advance(1);
        Memory<byte> memory = writer.GetMemory(5000);
        Assert.True(memory.Length >= 5000);
        memory.Span[..3].Fill(2);
        writer.Advance(3);
        writer.Advance(0);
        Assert.Equal([1, 2, 2, 2], writer.WrittenSpan.ToArray());
    }

    [Fact]
    public void Clear_zeroes_the_written_data_and_restarts_and_ResetWrittenCount_only_restarts()
    {
        using var writer = new NativeBufferWriter<byte>();
        writer.GetSpan(4)[..4].Fill(9);
        writer.Advance(4);
        writer.Clear();
        Assert.Equal(0, writer.WrittenCount);
        writer.Advance(4);
        Assert.Equal([0, 0, 0, 0], writer.WrittenSpan.ToArray());
        writer.GetSpan(4)[..4].Fill(7);
        writer.ResetWrittenCount();
        Assert.Equal(0, writer.WrittenCount);
        writer.Advance(8);
        Assert.Equal([0, 0, 0, 0, 7, 7, 7, 7], writer.WrittenSpan.ToArray());
    }

    [Fact]
    public void Advance_refuses_a_negative_count_and_a_count_past_the_buffer()
    {
        using var writer = new NativeBufferWriter<byte>(16);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => writer.Advance(-1)).ParamName);
        writer.Advance(10);
        Assert.Throws<InvalidOperationException>(() => writer.Advance(7));
        Assert.Equal(10, writer.WrittenCount);
        writer.Advance(6);
        Assert.Throws<InvalidOperationException>(() => writer.Advance(1));

        var reference = new ArrayBufferWriter<byte>(16);
        reference.Advance(16);
        Assert.Throws<InvalidOperationException>(() => reference.Advance(1));
    }

    [Fact]
    public void Negative_sizes_are_refused()
    {
        Assert.Equal("initialCapacity", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(0)).ParamName);
        Assert.Equal("initialCapacity", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(-1)).ParamName);
        using var writer = new NativeBufferWriter<byte>();
        Assert.Equal("sizeHint", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetSpan(-1)).ParamName);
        Assert.Equal("sizeHint", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetMemory(-1)).ParamName);
        writer.Advance(0);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(-1, 0));
    }

    [Fact]
    public void A_capacity_too_big_for_the_address_space_is_refused_clearly()
    {
        Assert.Throws<OverflowException>(() => new NativeBufferWriter<long>(long.MaxValue / 4));
        var error = Assert.Throws<OutOfMemoryException>(() => new NativeBufferWriter<long>(long.MaxValue / 16));
        Assert.Contains("NativeBufferWriter<Int64> block", error.Message, StringComparison.Ordinal);
        using var writer = new NativeBufferWriter<byte>(8);
        writer.Advance(8);
        Assert.Equal(8, writer.WrittenCount);
    }

    [Fact]
    public void After_dispose_every_member_throws_and_a_second_dispose_does_nothing()
    {
        var writer = new NativeBufferWriter<byte>(32);
        writer.Advance(1);
        writer.Dispose();
        writer.Dispose();
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.GetSpan());
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.GetMemory());
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.Advance(0));
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.WrittenCount);
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.WrittenSpan.Length);
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.GetWrittenSpan(0, 0).Length);
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.Capacity);
        DisposedMessages.AssertDisposed("NativeBufferWriter", () => writer.FreeCapacity);
        DisposedMessages.AssertDisposed("NativeBufferWriter", writer.Clear);
        DisposedMessages.AssertDisposed("NativeBufferWriter", writer.ResetWrittenCount);
    }

    [Fact]
    public void A_memory_kept_past_a_growth_or_a_dispose_throws_instead_of_reaching_the_old_block()
    {
        var writer = new NativeBufferWriter<byte>(16);
        Memory<byte> early = writer.GetMemory(16);
        early.Span[0] = 1;
        _ = writer.GetMemory(1 << 20);
        Assert.Throws<InvalidOperationException>(() => early.Span.Length);
        Assert.Throws<InvalidOperationException>(() => early.Pin());
        Memory<byte> late = writer.GetMemory();
        late.Span[0] = 2;
        writer.Dispose();
        Assert.Throws<ObjectDisposedException>(() => late.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => late.ToArray());
    }

    [Fact]
    public void A_pinned_memory_stops_the_writer_growing_or_being_disposed_until_unpinned()
    {
        var writer = new NativeBufferWriter<byte>(16);
        Memory<byte> memory = writer.GetMemory(16);
        MemoryHandle pin = memory.Pin();
        Assert.Throws<InvalidOperationException>(() => writer.GetSpan(1 << 20));
        Assert.Throws<InvalidOperationException>(writer.Dispose);
        Assert.Equal(16, writer.Capacity);
        unsafe
        {
            *(byte*)pin.Pointer = 5;
        }

        writer.Advance(1);
        Assert.Equal(5, writer.WrittenSpan[0]);

        // Only the pin's own handle ends it: a direct unpin through the manager is refused and ends nothing.
        Assert.True(MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(memory, out MemoryManager<byte>? manager));
        Assert.Throws<InvalidOperationException>(manager!.Unpin);
        Assert.Throws<InvalidOperationException>(writer.Dispose);
        pin.Dispose();
        Assert.Throws<InvalidOperationException>(manager.Unpin);
        Assert.True(writer.GetSpan(1 << 20).Length >= 1 << 20);
        writer.Dispose();
    }
}
