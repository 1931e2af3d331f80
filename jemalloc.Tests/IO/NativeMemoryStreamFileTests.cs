namespace jemalloc.Tests.IO;

/// <summary>
/// <see cref="NativeMemoryStream.CopyToAsync(Stream, int, CancellationToken)"/> into a real file. The
/// awaits resume on thread-pool threads, whose jemalloc thread caches outlive the test, so this class
/// checks the ledger itself instead of jemalloc's allocated bytes; in the leak-checked collection, so
/// that no leak-checked test runs beside it.
/// </summary>
[Collection(Support.LeakChecked.Name)]
public sealed class NativeMemoryStreamFileTests
{
    [Fact]
    public async Task CopyToAsync_and_CopyTo_write_from_the_position_to_the_end_byte_for_byte_into_a_MemoryStream_and_a_FileStream()
    {
        long liveCount = AllocationLedger.LiveCount;
        long liveBytes = AllocationLedger.LiveBytes;
        var data = new byte[3_000_001];
        new Random(7).NextBytes(data);
        var array = new SafeArray<byte>(data);
        var stream = new NativeMemoryStream(array, writable: false);

        using var memory = new MemoryStream();
        await stream.CopyToAsync(memory, bufferSize: 65_536);
        Assert.Equal(data.Length, stream.Position);
        Assert.Equal(data, memory.ToArray());

        string path = Path.Combine(Path.GetTempPath(), $"jemalloc-net-stream-{Guid.NewGuid():N}.bin");
        try
        {
            stream.Position = 17;
            await using (var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, 4096, useAsync: true))
            {
                await stream.CopyToAsync(file);
            }

            Assert.Equal(data[17..], await File.ReadAllBytesAsync(path));

            stream.Position = 1_000_000;
            using (var file = new FileStream(path, FileMode.Create, FileAccess.Write))
            {
                stream.CopyTo(file, bufferSize: 4096);
            }

            Assert.Equal(data[1_000_000..], await File.ReadAllBytesAsync(path));
        }
        finally
        {
            File.Delete(path);
        }

        // From the end there is nothing to copy.
        using var empty = new MemoryStream();
        await stream.CopyToAsync(empty);
        stream.CopyTo(empty);
        Assert.Equal(0, empty.Length);

        stream.Dispose();
        Assert.False(array.IsValid);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
        Assert.Equal(liveBytes, AllocationLedger.LiveBytes);
    }
}
