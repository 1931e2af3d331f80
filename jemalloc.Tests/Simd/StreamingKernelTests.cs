using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using jemalloc.Simd;

namespace jemalloc.Tests.Simd;

/// <summary>
/// The values the big-write kernels write, byte for byte against a scalar reference, for every
/// element size class (1 to 64 bytes, odd sizes whose pattern spans several cache lines, and one too
/// long to stream) at every start address modulo a cache line: the streaming fill, the measuring
/// fill (slices of both kernels), the streaming copy and the streaming clear. Nothing outside the
/// block may change. These run on every RID (Arm64's pair stores under qemu, x64 under wine).
/// </summary>
public sealed unsafe class StreamingKernelTests
{
    private const int Guard = 128;
    private const byte GuardByte = 0xEE;

    public static TheoryData<int> ElementSizes => [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32, 48, 64, 65, 96, 100, 4097];

    [Theory]
    [MemberData(nameof(ElementSizes))]
    public void The_streaming_fill_writes_exactly_the_elements_at_every_alignment(int size) => ForSize(size, new FillCheck());

    [Theory]
    [MemberData(nameof(ElementSizes))]
    public void The_measuring_fill_writes_exactly_the_elements_at_several_alignments(int size) => ForSize(size, new MeasuringCheck());

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(32)]
    [InlineData(63)]
    public void The_streaming_copy_copies_exactly_at_every_alignment(int sourceOffset)
    {
        int bytes = (int)NonTemporalFill.MinimumBytes + 4099;
        byte* source = (byte*)NativeMemory.AlignedAlloc((nuint)(bytes + 64), 64);
        byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)(bytes + 64 + (2 * Guard)), 64);
        try
        {
            new Random(sourceOffset).NextBytes(new Span<byte>(source, bytes + 64));
            var from = new ReadOnlySpan<byte>(source + sourceOffset, bytes);
            for (int offset = 0; offset < 64; offset++)
            {
                new Span<byte>(block, bytes + 64 + (2 * Guard)).Fill(GuardByte);
                byte* destination = block + Guard + offset;
                Assert.Equal(NonTemporalFill.IsSupported, NonTemporalCopy.TryCopy(destination, source + sourceOffset, (nuint)bytes));
                if (NonTemporalFill.IsSupported)
                {
                    Assert.True(from.SequenceEqual(new ReadOnlySpan<byte>(destination, bytes)), $"copy to offset {offset} from {sourceOffset}");
                    AssertGuards(block, Guard + offset, bytes, bytes + 64 + (2 * Guard));
                }
            }

            // Too small to stream, and overlapping blocks: refused, nothing written.
            new Span<byte>(block, 1024).Fill(GuardByte);
            Assert.False(NonTemporalCopy.TryCopy(block, source, 1000));
            Assert.False(new ReadOnlySpan<byte>(block, 1024).ContainsAnyExcept(GuardByte));
            Assert.False(NonTemporalCopy.TryCopy(source + 64, source, (nuint)bytes));
        }
        finally
        {
            NativeMemory.AlignedFree(source);
            NativeMemory.AlignedFree(block);
        }
    }

    [Fact]
    public void The_streaming_clear_zeroes_exactly_the_block_at_every_alignment()
    {
        int bytes = (int)NonTemporalFill.MinimumBytes + 777;
        int total = bytes + 64 + (2 * Guard);
        byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)total, 64);
        try
        {
            for (int offset = 0; offset < 64; offset++)
            {
                new Span<byte>(block, total).Fill(GuardByte);
                SimdKernels.Clear(block + Guard + offset, (nuint)bytes, FillKernel.NonTemporal);
                Assert.False(new ReadOnlySpan<byte>(block + Guard + offset, bytes).ContainsAnyExcept((byte)0), $"clear at offset {offset}");
                AssertGuards(block, Guard + offset, bytes, total);

                // The ordinary kernel, and blocks too small to stream, are cleared as well.
                new Span<byte>(block, total).Fill(GuardByte);
                SimdKernels.Clear(block + Guard + offset, 100, FillKernel.NonTemporal);
                SimdKernels.Clear(block + Guard + offset + 100, (nuint)bytes - 100, FillKernel.Ordinary);
                Assert.False(new ReadOnlySpan<byte>(block + Guard + offset, bytes).ContainsAnyExcept((byte)0));
                AssertGuards(block, Guard + offset, bytes, total);
            }
        }
        finally
        {
            NativeMemory.AlignedFree(block);
        }
    }

    private static void ForSize(int size, ISizeCheck check)
    {
        switch (size)
        {
            case 1: check.Run<byte>(); break;
            case 2: check.Run<short>(); break;
            case 3: check.Run<Bytes3>(); break;
            case 4: check.Run<int>(); break;
            case 5: check.Run<Bytes5>(); break;
            case 6: check.Run<Bytes6>(); break;
            case 7: check.Run<Bytes7>(); break;
            case 8: check.Run<long>(); break;
            case 9: check.Run<Bytes9>(); break;
            case 12: check.Run<Bytes12>(); break;
            case 16: check.Run<Bytes16>(); break;
            case 24: check.Run<Bytes24>(); break;
            case 32: check.Run<Bytes32>(); break;
            case 48: check.Run<Bytes48>(); break;
            case 64: check.Run<Bytes64>(); break;
            case 65: check.Run<Bytes65>(); break;
            case 96: check.Run<Bytes96>(); break;
            case 100: check.Run<Bytes100>(); break;
            case 4097: check.Run<Bytes4097>(); break;
            default: throw new ArgumentOutOfRangeException(nameof(size), size, "no element type of that size");
        }
    }

    // A value whose bytes all differ from each other and from the guard, so a byte out of phase shows.
    private static T ValueOf<T>()
        where T : unmanaged
    {
        T value = default;
        Span<byte> bytes = MemoryMarshal.AsBytes(new Span<T>(ref value));
        for (int i = 0; i < bytes.Length; i++)
        {
            bytes[i] = (byte)(0x11 + (i * 37 % 221));
        }

        return value;
    }

    // Against the scalar reference: byte i of a block of elements is byte i % size of the element.
    private static void AssertElements<T>(byte* start, long count, T value, string what)
        where T : unmanaged
    {
        byte* element = (byte*)&value;
        int size = sizeof(T);
        var expected = new byte[count * size];
        for (int i = 0; i < expected.Length; i++)
        {
            expected[i] = element[i % size];
        }

        var actual = new ReadOnlySpan<byte>(start, expected.Length);
        if (!actual.SequenceEqual(expected))
        {
            int first = actual.CommonPrefixLength(expected);
            Assert.Fail($"{what}: byte {first} of {expected.Length} is 0x{actual[first]:X2}, expected 0x{expected[first]:X2}");
        }
    }

    private static void AssertGuards(byte* block, int start, long bytes, long total)
    {
        Assert.False(new ReadOnlySpan<byte>(block, start).ContainsAnyExcept(GuardByte), "a byte before the block changed");
        Assert.False(new ReadOnlySpan<byte>(block + start + bytes, (int)(total - start - bytes)).ContainsAnyExcept(GuardByte), "a byte after the block changed");
    }

    private interface ISizeCheck
    {
        void Run<T>()
            where T : unmanaged;
    }

    // Just past the streaming kernel's floor, with a ragged tail, at each of the 64 offsets in a line.
    private sealed class FillCheck : ISizeCheck
    {
        public void Run<T>()
            where T : unmanaged
        {
            T value = ValueOf<T>();
            long count = ((long)NonTemporalFill.MinimumBytes / sizeof(T)) + 7;
            long bytes = count * sizeof(T);
            long total = bytes + 64 + (2 * Guard);
            byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)total, 64);
            try
            {
                for (int offset = 0; offset < 64; offset++)
                {
                    new Span<byte>(block, (int)total).Fill(GuardByte);
                    byte* start = block + Guard + offset;
                    bool streamed = NonTemporalFill.TryFill((T*)start, (nuint)count, value);
                    Assert.Equal(NonTemporalFill.CanStream<T>(), streamed);
                    if (!streamed)
                    {
                        // The structures' fill falls back to ordinary stores, with the same values.
                        SimdKernels.Fill(new Span<T>(start, (int)count), value, new FillPlan(FillKernel.NonTemporal, -1));
                    }

                    AssertElements(start, count, value, $"{sizeof(T)}-byte elements at offset {offset}");
                    AssertGuards(block, Guard + offset, bytes, total);
                }

                // Below the floor: refused, nothing written.
                new Span<byte>(block, (int)total).Fill(GuardByte);
                Assert.False(NonTemporalFill.TryFill((T*)block, (nuint)(1024 / sizeof(T) + 1), value));
                Assert.False(new ReadOnlySpan<byte>(block, (int)total).ContainsAnyExcept(GuardByte));
            }
            finally
            {
                NativeMemory.AlignedFree(block);
            }
        }
    }

    // Measuring fills of 3 MiB, each written whole by the kernel whose turn it is: two in a row give
    // one of each kernel, over the guard bytes' old contents.
    private sealed class MeasuringCheck : ISizeCheck
    {
        public void Run<T>()
            where T : unmanaged
        {
            T value = ValueOf<T>();
            long count = (3L << 20) / sizeof(T);
            long bytes = count * sizeof(T);
            long total = bytes + 64 + (2 * Guard);
            byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)total, 64);
            try
            {
                foreach (int offset in new[] { 0, 1, 13, 63 })
                {
                    var measurement = new FillMeasurement();
                    for (int turn = 0; turn < 2; turn++)
                    {
                        new Span<byte>(block, (int)total).Fill(GuardByte);
                        byte* start = block + Guard + offset;
                        SimdKernels.FillMeasuring((T*)start, (nuint)count, value, measurement);
                        AssertElements(start, count, value, $"measuring fill {turn} of {sizeof(T)}-byte elements at offset {offset}");
                        AssertGuards(block, Guard + offset, bytes, total);
                    }

                    // A kernel that could not stream this element size records no streaming fill.
                    Assert.Equal(NonTemporalFill.CanStream<T>() ? 1 : 0, measurement.Samples);
                }
            }
            finally
            {
                NativeMemory.AlignedFree(block);
            }
        }
    }

    [InlineArray(3)]
    private struct Bytes3 { private byte _first; }

    [InlineArray(5)]
    private struct Bytes5 { private byte _first; }

    [InlineArray(6)]
    private struct Bytes6 { private byte _first; }

    [InlineArray(7)]
    private struct Bytes7 { private byte _first; }

    [InlineArray(9)]
    private struct Bytes9 { private byte _first; }

    [InlineArray(12)]
    private struct Bytes12 { private byte _first; }

    [InlineArray(16)]
    private struct Bytes16 { private byte _first; }

    [InlineArray(24)]
    private struct Bytes24 { private byte _first; }

    [InlineArray(32)]
    private struct Bytes32 { private byte _first; }

    [InlineArray(48)]
    private struct Bytes48 { private byte _first; }

    [InlineArray(64)]
    private struct Bytes64 { private byte _first; }

    [InlineArray(65)]
    private struct Bytes65 { private byte _first; }

    [InlineArray(96)]
    private struct Bytes96 { private byte _first; }

    [InlineArray(100)]
    private struct Bytes100 { private byte _first; }

    [InlineArray(4097)]
    private struct Bytes4097 { private byte _first; }
}
