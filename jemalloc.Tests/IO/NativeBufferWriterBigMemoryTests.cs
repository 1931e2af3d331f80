using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// A <see cref="NativeBufferWriter{T}"/> past 2^31 elements. It touches about 2 GiB: run test runs that
/// include it under <c>flock /tmp/jemalloc-bigmem.lock</c> on shared machines.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterBigMemoryTests : LeakCheckedTest
{
    [Fact]
    public void More_than_2_pow_31_bytes_are_written_in_chunks_and_read_back_across_the_boundary()
    {
        const long total = (1L << 31) + 100_003;
        const int chunk = 1 << 20;
        using var writer = new NativeBufferWriter<byte>();
        long written = 0;
        while (written < total)
        {
            int length = (int)Math.Min(chunk, total - written);
            Span<byte> span = writer.GetSpan(length);
            span[..length].Fill(Mark(written / chunk));
            writer.Advance(length);
            written += length;
        }

        Assert.Equal(total, writer.WrittenCount);
        Assert.Throws<InvalidOperationException>(() => writer.WrittenSpan.Length);
        ReadOnlySpan<byte> across = writer.GetWrittenSpan((1L << 31) - 2, 4);
        Assert.Equal([Mark(2047), Mark(2047), Mark(2048), Mark(2048)], across.ToArray());
        Assert.Equal(Mark(0), writer.GetWrittenSpan(0, 1)[0]);
        Assert.Equal(Mark(2048), writer.GetWrittenSpan(total - 1, 1)[0]);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(total - 1, 2));

        // The same bytes as a sequence of segments over the one block, each within a span's reach.
        ReadOnlySequence<byte> sequence = writer.WrittenSequence;
        Assert.Equal(total, sequence.Length);
        Assert.False(sequence.IsSingleSegment);
        long covered = 0;
        foreach (ReadOnlyMemory<byte> segment in sequence)
        {
            Assert.Equal(Mark(covered / chunk), segment.Span[0]);
            covered += segment.Length;
        }

        Assert.Equal(total, covered);
        Assert.Equal([Mark(2047), Mark(2047), Mark(2048), Mark(2048)], sequence.Slice((1L << 31) - 2, 4).ToArray());

        // Handed over without a copy: too long for a SafeArray, whole in a HugeArray.
        Assert.Throws<InvalidOperationException>(() => writer.DetachToSafeArray());
        using HugeArray<byte> array = writer.DetachToHugeArray();
        Assert.Equal(total, array.Length);
        Assert.Equal(Mark(2047), array[(1L << 31) - 1]);
        Assert.Equal(Mark(2048), array[total - 1]);
        Assert.Throws<InvalidOperationException>(() => sequence.First.Span.Length);
        Assert.Equal(0, writer.WrittenCount);

        // Different on each side of the 2^31 boundary, and never zero.
        static byte Mark(long chunkIndex) => (byte)((chunkIndex * 7) + 1);
    }
}
