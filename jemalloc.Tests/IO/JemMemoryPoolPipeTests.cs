using System.IO.Pipelines;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// The pool under a real <see cref="Pipe"/>. Not a <see cref="LeakCheckedTest"/>: the pipe runs on
/// thread-pool threads, which outlive the test and keep the jemalloc thread state they created, so
/// jemalloc's process-wide allocated bytes cannot be compared. The blocks are checked exactly instead:
/// the pool's books, the arena's used bytes and the ledger. In the leak-checked collection, so that no
/// leak-checked test runs beside it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class JemMemoryPoolPipeTests
{
    [Fact]
    public async Task A_pipe_over_the_pool_carries_megabytes_between_a_writer_and_a_reader_intact()
    {
        using CheckedModeScope keepsBlocks = CheckedModeScope.Off(); // Checked mode keeps no returned block.
        const int total = 6 << 20;

        // In an explicit arena, which the library uses without thread caches: the thread-pool threads
        // that run the pipe keep no freed block cached after the test.
        using var arena = new JemArena();
        using var pool = new JemMemoryPool(arena: arena);
        long liveCount = AllocationLedger.LiveCount;
        long liveBytes = AllocationLedger.LiveBytes;
        var pipe = new Pipe(new PipeOptions(pool: pool, minimumSegmentSize: 4096, pauseWriterThreshold: 1 << 20, resumeWriterThreshold: 1 << 19, useSynchronizationContext: false));

        // Each side completes its end of the pipe with its exception, so a failure on one side ends the
        // other's wait (a writer paused by a dead reader would wait forever); the test waits with a timeout.
        Task writer = Task.Run(async () =>
        {
            try
            {
                await WriteAsync(pipe.Writer, total);
            }
            catch (Exception e)
            {
                await pipe.Writer.CompleteAsync(e);
                throw;
            }
        });

        Task<long> reader = Task.Run(async () =>
        {
            try
            {
                return await ReadAsync(pipe.Reader);
            }
            catch (Exception e)
            {
                await pipe.Reader.CompleteAsync(e);
                throw;
            }
        });

        await Workers.WithTimeout(Task.WhenAll(writer, reader));
        Assert.Equal(total, await reader);
        JemMemoryPoolStatistics stats = pool.GetStatistics();
        Assert.True(stats.RentCount > 1, $"The pipe rented {stats.RentCount} blocks from the pool.");
        Assert.Equal(stats.RentCount, stats.ReturnCount);
        Assert.Equal(0, stats.OutstandingBytes);
        CheckEveryBlockCameBack(pool, arena, liveCount, liveBytes);
    }

    private static async Task WriteAsync(PipeWriter writer, long total)
    {
        var random = new Random(42);
        long written = 0;
        while (written < total)
        {
            int chunk = (int)Math.Min(random.Next(1, 70_000), total - written);
            Memory<byte> memory = writer.GetMemory(chunk);
            Span<byte> span = memory.Span[..chunk];
            for (int i = 0; i < span.Length; i++)
            {
                span[i] = Pattern(written + i);
            }

            writer.Advance(chunk);
            written += chunk;
            FlushResult flushed = await writer.FlushAsync();
            Assert.False(flushed.IsCanceled);
            Assert.False(flushed.IsCompleted, "the reader stopped early");
        }

        await writer.CompleteAsync();
    }

    private static async Task<long> ReadAsync(PipeReader reader)
    {
        long read = 0;
        while (true)
        {
            ReadResult result = await reader.ReadAsync();
            foreach (ReadOnlyMemory<byte> segment in result.Buffer)
            {
                ReadOnlySpan<byte> span = segment.Span;
                for (int i = 0; i < span.Length; i++)
                {
                    if (span[i] != Pattern(read + i))
                    {
                        throw new InvalidDataException($"Byte {read + i:N0} is {span[i]}, expected {Pattern(read + i)}.");
                    }
                }

                read += span.Length;
            }

            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }

        await reader.CompleteAsync();
        return read;
    }

    private static void CheckEveryBlockCameBack(JemMemoryPool pool, JemArena arena, long liveCount, long liveBytes)
    {
        JemMemoryPoolStatistics stats = pool.GetStatistics();

        // Every block came back: kept for the next rents, in the arena and the ledger, until the trim.
        Assert.True(stats.CachedCount > 0, "The pool kept no returned block.");
        Assert.Equal(stats.CachedBytes, arena.UsedBytes);
        Assert.Equal(liveCount + stats.CachedCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes + stats.CachedBytes, AllocationLedger.LiveBytes);
        pool.Trim();
        Assert.Equal(0, arena.UsedBytes);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
    }

    private static byte Pattern(long position) => (byte)((position * 31) ^ (position >> 11));
}
