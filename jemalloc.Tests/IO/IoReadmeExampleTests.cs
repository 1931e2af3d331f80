using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using System.Text.Json;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>The adapters of docs/io.md end to end: a pipe over a pool, a JSON writer, a hand-over streamed out.</summary>
[Collection(LeakChecked.Name)]
public sealed class IoReadmeExampleTests : LeakCheckedTest
{
    [Fact]
    public async Task A_pipe_over_a_budgeted_pool_returns_every_block()
    {
        using var pool = new JemMemoryPool(budgetBytes: 64 << 20);
        var pipe = new Pipe(new PipeOptions(pool: pool, readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));

        // On the test thread (inline schedulers, and the flush completes at once below the pause threshold), so the
        // leak check's thread caches are this thread's.
        byte[] message = Encoding.UTF8.GetBytes("hello through native memory");
        message.CopyTo(pipe.Writer.GetMemory(message.Length).Span);
        pipe.Writer.Advance(message.Length);
        FlushResult flushed = await pipe.Writer.FlushAsync();
        Assert.False(flushed.IsCanceled);
        pipe.Writer.Complete();
        Assert.True(pipe.Reader.TryRead(out ReadResult result));
        Assert.Equal(message, result.Buffer.ToArray());
        pipe.Reader.AdvanceTo(result.Buffer.End);
        pipe.Reader.Complete();

        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.Equal(1, stats.RentCount);
        Assert.Equal(1, stats.ReturnCount);
        Assert.Equal(0, stats.OutstandingBytes);
    }

    [Fact]
    public void Utf8JsonWriter_writes_into_a_native_buffer_writer()
    {
        using var output = new NativeBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartObject();
            json.WriteString("name", "jemalloc");
            json.WriteEndObject();
        }

        ReadOnlySpan<byte> utf8 = output.WrittenSpan;
        Assert.Equal("{\"name\":\"jemalloc\"}", Encoding.UTF8.GetString(utf8));
    }

    [Fact]
    public async Task A_written_document_is_handed_to_an_array_and_streamed_out_without_a_copy()
    {
        using var file = new MemoryStream();
        using var output = new NativeBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartArray();
            for (int i = 0; i < 1000; i++)
            {
                json.WriteNumberValue(i);
            }

            json.WriteEndArray();
        }

        ReadOnlySequence<byte> all = output.WrittenSequence;
        long length = all.Length;
        using HugeArray<byte> document = output.DetachToHugeArray();
        using (var stream = new NativeMemoryStream(document, writable: false, leaveOpen: true))
        {
            await stream.CopyToAsync(file);
        }

        Assert.Equal(length, document.Length);
        Assert.Equal("[" + string.Join(",", Enumerable.Range(0, 1000)) + "]", Encoding.UTF8.GetString(file.ToArray()));
        Assert.Throws<InvalidOperationException>(() => all.ToArray());
        Assert.True(document.IsValid);
    }
}
