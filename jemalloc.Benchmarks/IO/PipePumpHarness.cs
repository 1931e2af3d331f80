using System.Buffers;
using System.IO.Hashing;
using System.IO.Pipelines;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.IO;

/// <summary>
/// The timed harness of <c>jembench io --pipe</c>: a writer task pumps the deterministic stream of
/// <see cref="PipeStreamPattern"/> through a <see cref="Pipe"/> in its fixed sequence of segment sizes
/// (one flush per segment) while a reader task reads it back, checks every byte against the stream
/// and hashes it. Both sides use the same <see cref="PipeOptions"/> but the pool.
/// </summary>
public static class PipePumpHarness
{
    /// <summary>Unread bytes at which the writer's flush waits for the reader (the same on both sides).</summary>
    public const int PauseWriterThreshold = 1 << 20;

    /// <summary>Unread bytes below which a waiting writer resumes (the same on both sides).</summary>
    public const int ResumeWriterThreshold = 1 << 19;

    /// <summary>The smallest segment the pipe rents (its default).</summary>
    public const int MinimumSegmentSize = 4096;

    /// <summary>The bytes pumped untimed first, on every side.</summary>
    public const long WarmUpBytes = 16 * 1024 * 1024;

    /// <summary>Pumps <paramref name="totalBytes"/> through a pipe over <paramref name="side"/>'s pool and measures it.</summary>
    /// <param name="side">The pipe's memory pool.</param>
    /// <param name="totalBytes">The bytes to pump.</param>
    /// <param name="corrupt">Test hook: one byte is flipped in the pipe's memory after the writer wrote it, which the reader must catch.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="totalBytes"/> is below 1.</exception>
    /// <exception cref="BenchmarkVerificationException">A byte read differs from the stream, bytes are missing, a checksum differs, or the pool did not get every block back.</exception>
    public static PipePumpResult Run(PipePoolSide side, long totalBytes, bool corrupt)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(totalBytes, 1);
        ulong expected = PipeStreamPattern.Checksum(totalBytes);
        using JemMemoryPool? jem = side == PipePoolSide.Jem ? new JemMemoryPool() : null;
        // Untimed, so that compiling the pipe's and the harness's code is not measured.
        _ = Pump(jem, Math.Min(totalBytes, WarmUpBytes), corrupt: false);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        ProcessMemory.ResetPeakResident(Environment.ProcessId);
        long rentsBefore = jem?.GetStatistics().RentCount ?? 0;

        var region = TimedRegion.Start();
        (Task<(long Bytes, long Segments, ulong Checksum)> writing, Task<(long Bytes, long FirstMismatch, ulong Checksum)> reading) = Pump(jem, totalBytes, corrupt);
        region = region.Stop();

        (long written, long segments, ulong writerChecksum) = writing.Result;
        (long read, long firstMismatch, ulong readerChecksum) = reading.Result;
        string where = $"io pipe ({side}, {totalBytes:N0} bytes)";
        if (firstMismatch >= 0)
        {
            throw new BenchmarkVerificationException($"{where}: byte {firstMismatch:N0} read from the pipe differs from the byte written.");
        }

        if (written != totalBytes || read != totalBytes)
        {
            throw new BenchmarkVerificationException($"{where}: {written:N0} bytes were written and {read:N0} read.");
        }

        if (writerChecksum != expected || readerChecksum != expected)
        {
            throw new BenchmarkVerificationException($"{where}: checksums differ: expected {expected:X16}, writer {writerChecksum:X16}, reader {readerChecksum:X16}.");
        }

        long rents = -1;
        if (jem is not null)
        {
            JemMemoryPoolStatistics books = jem.GetStatistics();
            if (books.OutstandingCount != 0)
            {
                throw new BenchmarkVerificationException($"{where}: the completed pipe kept {books.OutstandingCount:N0} of the pool's blocks ({books.OutstandingBytes:N0} bytes).");
            }

            rents = books.RentCount - rentsBefore;
        }

        return new PipePumpResult(side, read, segments, region.Seconds, region.AllocatedBytes, region.Gen0, region.Gen1, region.Gen2, region.PageFaults,
            ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1, rents, readerChecksum);
    }

    private static (Task<(long Bytes, long Segments, ulong Checksum)> Writing, Task<(long Bytes, long FirstMismatch, ulong Checksum)> Reading) Pump(
        JemMemoryPool? pool, long totalBytes, bool corrupt)
    {
        var pipe = new Pipe(new PipeOptions(
            pool: pool,
            readerScheduler: PipeScheduler.ThreadPool,
            writerScheduler: PipeScheduler.ThreadPool,
            pauseWriterThreshold: PauseWriterThreshold,
            resumeWriterThreshold: ResumeWriterThreshold,
            minimumSegmentSize: MinimumSegmentSize,
            useSynchronizationContext: false));
        Task<(long Bytes, long Segments, ulong Checksum)> writing = Task.Run(() => WriteAsync(pipe.Writer, totalBytes, corrupt));
        Task<(long Bytes, long FirstMismatch, ulong Checksum)> reading = Task.Run(() => ReadAsync(pipe.Reader));
        Task.WaitAll(writing, reading);
        return (writing, reading);
    }

    private static async Task<(long Bytes, long Segments, ulong Checksum)> WriteAsync(PipeWriter writer, long totalBytes, bool corrupt)
    {
        var hash = new XxHash3();
        long written = 0;
        long segment = 0;
        try
        {
            while (written < totalBytes)
            {
                int size = (int)Math.Min(PipeStreamPattern.SegmentSize(segment), totalBytes - written);
                WriteSegment(writer.GetMemory(size), size, written, hash, corrupt && segment == 1);
                writer.Advance(size);
                written += size;
                segment++;
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception e)
        {
            await writer.CompleteAsync(e).ConfigureAwait(false);
            throw;
        }

        await writer.CompleteAsync().ConfigureAwait(false);
        return (written, segment, hash.GetCurrentHashAsUInt64());
    }

    private static void WriteSegment(Memory<byte> memory, int size, long offset, XxHash3 hash, bool corrupt)
    {
        Span<byte> span = memory.Span[..size];
        PipeStreamPattern.Fill(span, offset);
        hash.Append(span);
        if (corrupt)
        {
            // After the writer's hash: as if the pipe's memory changed between the write and the read.
            span[size / 2] ^= 0x01;
        }
    }

    private static async Task<(long Bytes, long FirstMismatch, ulong Checksum)> ReadAsync(PipeReader reader)
    {
        var hash = new XxHash3();
        long read = 0;
        long firstMismatch = -1;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                ReadOnlySequence<byte> buffer = result.Buffer;
                (read, firstMismatch) = Consume(buffer, hash, read, firstMismatch);
                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception e)
        {
            await reader.CompleteAsync(e).ConfigureAwait(false);
            throw;
        }

        await reader.CompleteAsync().ConfigureAwait(false);
        return (read, firstMismatch, hash.GetCurrentHashAsUInt64());
    }

    private static (long Read, long FirstMismatch) Consume(ReadOnlySequence<byte> buffer, XxHash3 hash, long read, long firstMismatch)
    {
        foreach (ReadOnlyMemory<byte> memory in buffer)
        {
            ReadOnlySpan<byte> span = memory.Span;
            hash.Append(span);
            if (firstMismatch < 0)
            {
                int mismatch = PipeStreamPattern.FirstMismatch(span, read);
                if (mismatch >= 0)
                {
                    firstMismatch = read + mismatch;
                }
            }

            read += span.Length;
        }

        return (read, firstMismatch);
    }
}
