using System.Buffers;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text.Json;
using CommunityToolkit.HighPerformance.Buffers;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.IO;

/// <summary>
/// The timed harness of <c>jembench io --json</c>: writes the deterministic JSON document of
/// <see cref="JsonDocumentContent"/> with <see cref="Utf8JsonWriter"/> into one side's buffer writer,
/// created with the same initial capacity on every side, and measures time, managed allocations, GC
/// counts and peak RSS. The written bytes are hashed after the timed region, the same way on every side.
/// </summary>
public static class JsonWriteHarness
{
    /// <summary>Room kept for the last record and <see cref="Utf8JsonWriter"/>'s request for more space past the target.</summary>
    public const long Slack = 64 * 1024;

    /// <summary>The size of the untimed document written first, on every side.</summary>
    public const long WarmUpBytes = 4 * 1024 * 1024;

    /// <summary>The most bytes <paramref name="side"/> can hold.</summary>
    /// <remarks>
    /// <see cref="ArrayBufferWriter{T}"/> holds one array, at most <see cref="System.Array.MaxLength"/> bytes.
    /// <c>ArrayPoolBufferWriter</c> rounds each growth past 1 MiB up to a power of two, and the power after
    /// 2^30 does not fit in an <see cref="int"/> length: it cannot grow past 2^30 bytes.
    /// </remarks>
    public static long MaxBytes(JsonWriterSide side) => side switch
    {
        JsonWriterSide.Native or JsonWriterSide.Limit => long.MaxValue,
        JsonWriterSide.Array => System.Array.MaxLength,
        _ => 1L << 30,
    };

    /// <summary>Whether <paramref name="side"/> writes into managed arrays (and so holds at most what one array holds).</summary>
    public static bool IsManaged(JsonWriterSide side) => side is JsonWriterSide.Array or JsonWriterSide.ArrayPool;

    /// <summary>Whether <paramref name="side"/> can hold a document of <paramref name="targetBytes"/> (see <see cref="MaxBytes"/>).</summary>
    public static bool CanHold(JsonWriterSide side, long targetBytes) =>
        !IsManaged(side) || targetBytes + Slack <= MaxBytes(side);

    /// <summary>Writes the document into a new writer of <paramref name="side"/> and measures it.</summary>
    /// <param name="side">The buffer writer.</param>
    /// <param name="targetBytes">The document size.</param>
    /// <param name="initialCapacity">The capacity every side's writer is created with, in bytes.</param>
    /// <param name="corrupt">Test hook: one written byte is flipped before hashing, which the check against the reference must catch.</param>
    /// <exception cref="ArgumentOutOfRangeException">A size is below 1, or a managed side cannot hold the document (see <see cref="CanHold"/>).</exception>
    public static JsonWriteResult Run(JsonWriterSide side, long targetBytes, long initialCapacity, bool corrupt)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(targetBytes, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(initialCapacity, 1);
        if (!CanHold(side, targetBytes) || (IsManaged(side) && initialCapacity > System.Array.MaxLength))
        {
            throw new ArgumentOutOfRangeException(nameof(targetBytes), targetBytes, $"The {side} writer holds at most {MaxBytes(side):N0} bytes in one .NET array.");
        }

        // Untimed, so that compiling the writer's and the encoder's code is not measured.
        _ = RunSide(side, Math.Min(targetBytes, WarmUpBytes), Math.Min(initialCapacity, WarmUpBytes), corrupt: false);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        ProcessMemory.ResetPeakResident(Environment.ProcessId);
        return RunSide(side, targetBytes, initialCapacity, corrupt);
    }

    private static JsonWriteResult RunSide(JsonWriterSide side, long targetBytes, long initialCapacity, bool corrupt) => side switch
    {
        JsonWriterSide.Native => RunNative(targetBytes, initialCapacity, corrupt),
        JsonWriterSide.Array => RunArray(targetBytes, (int)initialCapacity, corrupt),
        JsonWriterSide.ArrayPool => RunArrayPool(targetBytes, (int)initialCapacity, corrupt),
        _ => RunLimit(targetBytes, corrupt),
    };

    private static JsonWriteResult RunNative(long targetBytes, long initialCapacity, bool corrupt)
    {
        var region = TimedRegion.Start();
        using var buffer = new NativeBufferWriter<byte>(initialCapacity);
        Write(buffer, targetBytes);
        region = region.Stop();
        return NativeResult(region, JsonWriterSide.Native, buffer, targetBytes, initialCapacity, corrupt);
    }

    private static JsonWriteResult RunLimit(long targetBytes, bool corrupt)
    {
        // Presized and written over once, untimed: the timed encoding neither grows the block nor faults a page in.
        long capacity = targetBytes + Slack;
        using var buffer = new NativeBufferWriter<byte>(capacity);
        while (buffer.WrittenCount < capacity)
        {
            Span<byte> free = buffer.GetSpan();
            free.Clear();
            buffer.Advance(free.Length);
        }

        buffer.ResetWrittenCount();
        var region = TimedRegion.Start();
        Write(buffer, targetBytes);
        region = region.Stop();
        if (buffer.Capacity != capacity)
        {
            throw new BenchmarkVerificationException($"io json (limit): the presized block grew from {capacity:N0} to {buffer.Capacity:N0} bytes, so the limit timed a growth.");
        }

        return NativeResult(region, JsonWriterSide.Limit, buffer, targetBytes, capacity, corrupt);
    }

    private static JsonWriteResult NativeResult(TimedRegion region, JsonWriterSide side, NativeBufferWriter<byte> buffer, long targetBytes, long initialCapacity, bool corrupt)
    {
        long length = buffer.WrittenCount;
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        for (long start = 0; start < length;)
        {
            int chunk = (int)Math.Min(length - start, 1 << 30);
            ReadOnlySpan<byte> written = buffer.GetWrittenSpan(start, chunk);
            if (corrupt && start == 0)
            {
                Flip(written);
            }

            hash.AppendData(written);
            start += chunk;
        }

        return Result(region, side, targetBytes, initialCapacity, length, Convert.ToHexString(hash.GetCurrentHash()));
    }

    private static JsonWriteResult RunArray(long targetBytes, int initialCapacity, bool corrupt)
    {
        var region = TimedRegion.Start();
        var buffer = new ArrayBufferWriter<byte>(initialCapacity);
        Write(buffer, targetBytes);
        region = region.Stop();
        return Result(region, JsonWriterSide.Array, targetBytes, initialCapacity, buffer.WrittenCount, Hash(buffer.WrittenSpan, corrupt));
    }

    private static JsonWriteResult RunArrayPool(long targetBytes, int initialCapacity, bool corrupt)
    {
        var region = TimedRegion.Start();
        using var buffer = new ArrayPoolBufferWriter<byte>(initialCapacity);
        Write(buffer, targetBytes);
        region = region.Stop();
        return Result(region, JsonWriterSide.ArrayPool, targetBytes, initialCapacity, buffer.WrittenCount, Hash(buffer.WrittenSpan, corrupt));
    }

    private static void Write(IBufferWriter<byte> buffer, long targetBytes)
    {
        using var writer = new Utf8JsonWriter(buffer);
        _ = JsonDocumentContent.Write(writer, targetBytes);
    }

    private static string Hash(ReadOnlySpan<byte> written, bool corrupt)
    {
        if (corrupt)
        {
            Flip(written);
        }

        return Convert.ToHexString(SHA256.HashData(written));
    }

    // The test hook writes into the written data as a faulty writer would have.
    private static void Flip(ReadOnlySpan<byte> written) =>
        MemoryMarshal.CreateSpan(ref MemoryMarshal.GetReference(written), written.Length)[written.Length / 2] ^= 0x20;

    private static JsonWriteResult Result(TimedRegion region, JsonWriterSide side, long targetBytes, long initialCapacity, long bytes, string sha256) =>
        new(side, targetBytes, initialCapacity, bytes, region.Seconds, region.AllocatedBytes, region.Gen0, region.Gen1, region.Gen2, region.PageFaults,
            ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1, sha256);
}
