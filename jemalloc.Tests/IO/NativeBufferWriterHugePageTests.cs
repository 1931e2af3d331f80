using jemalloc.Tests.Support;
using jemalloc.Tests.Tuning;

namespace jemalloc.Tests.IO;

/// <summary>
/// A writer outside an arena follows <see cref="HugePagePolicy"/> as an array created without options
/// does: once its block grows to the threshold, the grown block is advised for huge pages before the
/// copy touches it. The kernel's own smaps is the judge.
/// </summary>
[Collection(GlobalSettings.Name)]
public sealed class NativeBufferWriterHugePageTests
{
    private const int MiB = 1 << 20;

    [Fact]
    public unsafe void A_writer_grown_past_the_threshold_is_advised_for_huge_pages_and_keeps_every_byte()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // the policy's answer on any host
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Checked mode moves every resized block (the old one goes to the quarantine), so no growth is in place.
        using var writer = new NativeBufferWriter<byte>();
        WriteCounting(writer, 8 * MiB);
        Assert.True(writer.Capacity >= 8 * MiB);

        nint address = WrittenAddress(writer);
        // The advice is what the writer owes; whether the kernel backs the range with huge pages also
        // depends on whether jemalloc reused pages this process touched before (they stay 4 KiB), which
        // the array huge-page tests control with a fresh arena.
        Assert.Equal(Smaps.HugePagesOnRequest, address % (2 * MiB) == 0 && Smaps.AdvisedHuge(address, 8 * MiB));

        AssertCounting(writer, 8 * MiB);
        using HugeArray<byte> detached = writer.DetachToHugeArray();
        Assert.Equal(address, detached.Pointer);
        Assert.Equal(8 * MiB, detached.Length);
        Assert.Equal((byte)((8 * MiB - 1) % 251), detached[8 * MiB - 1]);
    }

    [Fact]
    public void A_writer_in_an_arena_uses_the_arena_s_choice_not_the_policy()
    {
        // A new arena maps fresh memory, which no earlier advice in this process reached.
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<byte>(arena);
        WriteCounting(writer, 8 * MiB);
        Assert.False(Smaps.AdvisedHuge(WrittenAddress(writer), 8 * MiB));
        AssertCounting(writer, 8 * MiB);
    }

    private static unsafe nint WrittenAddress(NativeBufferWriter<byte> writer)
    {
        fixed (byte* written = writer.GetWrittenSpan(0, 1))
        {
            return (nint)written;
        }
    }

    // Small writes, so the block grows many times from its first size through the threshold.
    private static void WriteCounting(NativeBufferWriter<byte> writer, int count)
    {
        for (int done = 0; done < count;)
        {
            Span<byte> span = writer.GetSpan(Math.Min(4000, count - done));
            int chunk = Math.Min(Math.Min(span.Length, 4000), count - done);
            for (int i = 0; i < chunk; i++)
            {
                span[i] = (byte)((done + i) % 251);
            }

            writer.Advance(chunk);
            done += chunk;
        }
    }

    private static void AssertCounting(NativeBufferWriter<byte> writer, int count)
    {
        Assert.Equal(count, writer.WrittenCount);
        ReadOnlySpan<byte> written = writer.WrittenSpan;
        for (int i = 0; i < count; i++)
        {
            if (written[i] != (byte)(i % 251))
            {
                Assert.Fail($"Byte {i} is {written[i]}, expected {(byte)(i % 251)}.");
            }
        }
    }
}
