using System.IO.Hashing;

namespace jemalloc.Benchmarks.IO;

/// <summary>
/// The deterministic stream of <c>jembench io --pipe</c>: byte <c>i</c> of the stream is a fixed
/// function of <c>i</c> modulo a prime period, and the writer's segments take a fixed sequence of sizes
/// from <see cref="MinSegment"/> to <see cref="MaxSegment"/>. Every byte read can be checked against it.
/// </summary>
public static class PipeStreamPattern
{
    /// <summary>The smallest segment the writer writes.</summary>
    public const int MinSegment = 4 * 1024;

    /// <summary>The largest segment the writer writes.</summary>
    public const int MaxSegment = 64 * 1024;

    // Prime, so the pattern does not line up with power-of-two block sizes.
    private const int Period = 65_521;

    // One period and one largest segment more: any stretch of up to MaxSegment bytes is one slice.
    private static readonly byte[] Pattern = Make();

    /// <summary>The size of segment <paramref name="index"/> of the writer's sequence.</summary>
    public static int SegmentSize(long index) => MinSegment + (int)(Mix((ulong)index + 1) % (MaxSegment - MinSegment + 1));

    /// <summary>Fills <paramref name="destination"/> with the stream's bytes from <paramref name="offset"/> on.</summary>
    public static void Fill(Span<byte> destination, long offset)
    {
        while (!destination.IsEmpty)
        {
            ReadOnlySpan<byte> source = Slice(offset, destination.Length);
            source.CopyTo(destination);
            destination = destination[source.Length..];
            offset += source.Length;
        }
    }

    /// <summary>The index in <paramref name="data"/> of its first byte that differs from the stream at <paramref name="offset"/>, or -1 if none.</summary>
    public static int FirstMismatch(ReadOnlySpan<byte> data, long offset)
    {
        int done = 0;
        while (done < data.Length)
        {
            ReadOnlySpan<byte> expected = Slice(offset + done, data.Length - done);
            int same = data.Slice(done, expected.Length).CommonPrefixLength(expected);
            if (same < expected.Length)
            {
                return done + same;
            }

            done += expected.Length;
        }

        return -1;
    }

    /// <summary>The XxHash3 of the first <paramref name="length"/> bytes of the stream.</summary>
    public static ulong Checksum(long length)
    {
        var hash = new XxHash3();
        for (long offset = 0; offset < length;)
        {
            ReadOnlySpan<byte> chunk = Slice(offset, (int)Math.Min(length - offset, MaxSegment));
            hash.Append(chunk);
            offset += chunk.Length;
        }

        return hash.GetCurrentHashAsUInt64();
    }

    private static ReadOnlySpan<byte> Slice(long offset, int length) =>
        Pattern.AsSpan((int)(offset % Period), Math.Min(length, MaxSegment));

    private static byte[] Make()
    {
        var pattern = new byte[Period + MaxSegment];
        for (int i = 0; i < pattern.Length; i++)
        {
            pattern[i] = (byte)(Mix((ulong)(i % Period)) >> 56);
        }

        return pattern;
    }

    // SplitMix64's finalizer: a fixed, well-spread function of the index.
    private static ulong Mix(ulong x)
    {
        x += 0x9E37_79B9_7F4A_7C15UL;
        x = (x ^ (x >> 30)) * 0xBF58_476D_1CE4_E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D0_49BB_1331_11EBUL;
        return x ^ (x >> 31);
    }
}
