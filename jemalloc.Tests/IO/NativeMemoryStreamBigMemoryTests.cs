using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A <see cref="NativeMemoryStream"/> past 2 GiB, over a <see cref="HugeArray{T}"/> and growing. Each
/// test touches about 2 GiB: run test runs that include it under <c>flock /tmp/jemalloc-bigmem.lock</c>
/// on shared machines.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeMemoryStreamBigMemoryTests : LeakCheckedTest
{
    private const long Boundary = 1L << 31;
    private const long Length = Boundary + 4097;

    [Fact]
    public void Over_a_HugeArray_past_2_GiB_it_seeks_reads_and_writes_across_the_boundary_and_to_the_end()
    {
        using var array = new HugeArray<byte>(Length);
        using var stream = new NativeMemoryStream(array, leaveOpen: true);
        Assert.Equal(Length, stream.Length);
        Assert.Equal(Length, stream.Capacity);

        Assert.Equal(Boundary - 2, stream.Seek(Boundary - 2, SeekOrigin.Begin));
        stream.Write([1, 2, 3, 4]);
        Assert.Equal(Boundary + 2, stream.Position);
        Assert.Equal(3, array[Boundary]);

        stream.Seek(-6, SeekOrigin.Current);
        var read = new byte[6];
        Assert.Equal(6, stream.Read(read));
        Assert.Equal([0, 0, 1, 2, 3, 4], read);

        stream.Seek(-1, SeekOrigin.End);
        stream.WriteByte(9);
        Assert.Equal(Length, stream.Position);
        Assert.Throws<NotSupportedException>(() => stream.WriteByte(1));
        stream.Seek(-1, SeekOrigin.End);
        Assert.Equal(9, stream.ReadByte());
        Assert.Equal(-1, stream.ReadByte());

        stream.SetLength(Boundary + 1);
        Assert.Equal(Boundary + 1, stream.Length);
        Assert.Equal(Boundary + 1, stream.Position);
        Assert.Throws<InvalidOperationException>(stream.ToArray);
    }

    [Fact]
    public async Task A_growable_stream_passes_2_GiB_and_its_copy_reaches_the_destination_whole()
    {
        using var stream = new NativeMemoryStream();
        stream.Position = Boundary + 10;
        stream.Write([7, 8]);
        Assert.Equal(Boundary + 12, stream.Length);
        Assert.True(stream.Capacity >= Boundary + 12);

        // The gap up to the write reads as zeros, then the written bytes.
        stream.Position = Boundary - 1;
        var read = new byte[20];
        Assert.Equal(13, stream.Read(read));
        Assert.Equal([.. new byte[11], 7, 8], read[..13]);

        long count = 0, sum = 0;
        var counter = new CallbackStream(
            chunk =>
            {
                count += chunk.Length;
                if (chunk.ContainsAnyExcept((byte)0))
                {
                    foreach (byte b in chunk)
                    {
                        sum += b;
                    }
                }
            },
            keepChunks: false);
        stream.Position = 0;
        await stream.CopyToAsync(counter);
        Assert.Equal(Boundary + 12, count);
        Assert.Equal(15, sum);
    }
}
