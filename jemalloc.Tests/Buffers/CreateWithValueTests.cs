using System.Runtime.InteropServices;
using jemalloc.Memory;
using jemalloc.Simd;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// The create-with-value constructors (no zeroing pass) and the non-temporal fill kernel behind every
/// <c>Fill</c>: every element holds exactly the value, whatever the length, element size, start
/// address and old contents of the memory.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class CreateWithValueTests : LeakCheckedTest
{
    /// <summary>Lengths around the vector widths (16, 32, 64 bytes) and a cache line's multiples.</summary>
    public static TheoryData<int> Lengths => [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4097];

    // Old data in the memory jemalloc hands out next: blocks of the same sizes, written and freed.
    private static void Dirty(int bytes)
    {
        for (int i = 0; i < 4; i++)
        {
            byte* block = (byte*)Jem.Malloc((nuint)bytes);
            new Span<byte>(block, bytes).Fill(0xA5);
            Jem.Free(block);
        }
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void SafeArray_with_a_value_holds_it_in_every_element(int length)
    {
        Dirty(length * sizeof(long));
        using var longs = new SafeArray<long>(length, -0x0102030405060708);
        Assert.All(longs.ToArray(), v => Assert.Equal(-0x0102030405060708, v));

        Dirty(length);
        using var bytes = new SafeArray<byte>(length, 0x3C);
        Assert.All(bytes.ToArray(), v => Assert.Equal(0x3C, v));

        using var triples = new SafeArray<Triple>(length, new Triple(1, 2, 3));
        Assert.All(triples.ToArray(), v => Assert.Equal(new Triple(1, 2, 3), v));
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void FixedBuffer_and_HugeArray_with_a_value_hold_it_in_every_element(int length)
    {
        Dirty(length * sizeof(int));
        var ints = new FixedBuffer<int>(length, 0x5EED);
        try
        {
            Assert.Equal(length, ints.Length);
            Assert.All(ints.ToArray(), v => Assert.Equal(0x5EED, v));
        }
        finally
        {
            ints.Free();
        }

        var doubles = new FixedBuffer<double>(length, -0.0, AllocationOptions.Default);
        try
        {
            Assert.All(doubles.ToArray(), v => Assert.Equal(BitConverter.DoubleToInt64Bits(-0.0), BitConverter.DoubleToInt64Bits(v)));
        }
        finally
        {
            doubles.Free();
        }

        using var shorts = new HugeArray<short>(length, (short)-2);
        using MemoryLease<short> lease = shorts.Lease();
        Assert.False(lease.Span.ContainsAnyExcept((short)-2));
    }

    [Fact]
    public void Blocks_above_the_non_temporal_threshold_are_filled_exactly_by_create_and_by_Fill()
    {
        const int Threshold = 1 << 20;
        int length = (Threshold / sizeof(ulong)) + 13;
        Assert.Equal(FillKernel.Ordinary, SimdKernels.FillPlanFor<ulong>(length).Kernel); // automatic: smaller than the last-level cache
        FillPolicy.NonTemporalThresholdBytes = Threshold;
        try
        {
            Assert.Equal(NonTemporalFill.IsSupported ? FillKernel.NonTemporal : FillKernel.Ordinary, SimdKernels.FillPlanFor<ulong>(length).Kernel);
            Assert.Equal(FillKernel.Ordinary, SimdKernels.FillPlanFor<ulong>(length - 14).Kernel);
            FillsEveryElement(length);
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L)]
    [InlineData(65_537L)]
    [InlineData(long.MaxValue - 1)]
    public void Odd_element_sizes_stream_byte_exactly_at_any_threshold(long threshold)
    {
        FillPolicy.NonTemporalThresholdBytes = threshold;
        try
        {
            // 3 and 7 bytes: patterns of 192 and 448 bytes; lengths on both sides of the kernel's 64 KiB floor.
            foreach (int length in new[] { 1, 21_845, 21_846, 21_847, 100_003 })
            {
                var odd3 = new Odd3(0xA1, 0xB2, 0xC3);
                using (var created = new HugeArray<Odd3>(length, odd3))
                {
                    AssertPattern(created, [0xA1, 0xB2, 0xC3]);
                    created.Fill(new Odd3(1, 2, 3));
                    AssertPattern(created, [1, 2, 3]);
                }

                var odd7 = new Odd7(0x44332211, 0x6655, 0x77);
                using (var created = new SafeArray<Odd7>(length, odd7))
                {
                    AssertPattern(created, [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77]);
                }

                // FixedBuffer holds primitives only, with a value or without.
                Assert.Throws<NotSupportedException>(() => new FixedBuffer<Odd7>(length, odd7).Free());
            }
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    private static void AssertPattern<T>(NativeBuffer<T> structure, byte[] element)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = structure.Lease();
        AssertBytes(MemoryMarshal.AsBytes(lease.Span), element);
    }

    // The scalar reference: byte i of the block is byte i % size of the element.
    private static void AssertBytes(ReadOnlySpan<byte> bytes, byte[] element)
    {
        Assert.Equal(0, bytes.Length % element.Length);
        for (int i = 0; i < bytes.Length; i++)
        {
            if (bytes[i] != element[i % element.Length])
            {
                Assert.Fail($"byte {i} of {bytes.Length} is 0x{bytes[i]:X2}, expected 0x{element[i % element.Length]:X2}");
            }
        }
    }

    [Fact]
    public void FillPolicy_defaults_to_automatic_and_refuses_a_negative_threshold()
    {
        Assert.Equal(FillPolicy.Automatic, FillPolicy.NonTemporalThresholdBytes);
        Assert.Throws<ArgumentOutOfRangeException>(() => FillPolicy.NonTemporalThresholdBytes = -2);
        Assert.Throws<ArgumentOutOfRangeException>(() => FillPolicy.NonTemporalThresholdBytes = long.MinValue);
        Assert.Equal(FillPolicy.Automatic, FillPolicy.NonTemporalThresholdBytes);
        FillPolicy.NonTemporalThresholdBytes = FillPolicy.Always;
        try
        {
            // Everything streams that the kernel can stream; blocks too small for it use Span<T>.Fill.
            Assert.Equal(NonTemporalFill.IsSupported ? FillKernel.NonTemporal : FillKernel.Ordinary, SimdKernels.FillPlanFor<byte>(1).Kernel);
            using var small = new SafeArray<int>(5, 9);
            Assert.All(small.ToArray(), v => Assert.Equal(9, v));
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    // Create-with-value, Fill, VectorFill and ParallelVectorFill of every structure, with the value in every element.
    private static void FillsEveryElement(int length)
    {
        Dirty(length * sizeof(ulong));

        using (var created = new SafeArray<ulong>(length, 0xFEDCBA9876543210, AllocationOptions.Default))
        {
            using MemoryLease<ulong> lease = created.Lease();
            Assert.False(lease.Span.ContainsAnyExcept(0xFEDCBA9876543210UL));
        }

        using (var huge = new HugeArray<Triple>(length, new Triple(7, 8, 9), AllocationOptions.WithHugePages))
        {
            using (MemoryLease<Triple> lease = huge.Lease())
            {
                Assert.False(lease.Span.ContainsAnyExcept(new Triple(7, 8, 9)));
            }

            huge.Fill(new Triple(4, 5, 6));
            using MemoryLease<Triple> again = huge.Lease();
            Assert.False(again.Span.ContainsAnyExcept(new Triple(4, 5, 6)));
        }

        var buffer = new FixedBuffer<float>(length, 1.5f);
        try
        {
            buffer.Fill(float.NaN);
            using MemoryLease<float> lease = buffer.Lease();
            Assert.False(MemoryMarshal.Cast<float, int>(lease.Span).ContainsAnyExcept(BitConverter.SingleToInt32Bits(float.NaN)));
        }
        finally
        {
            buffer.Free();
        }

        using var array = new HugeArray<long>(length);
        array.VectorFill(-3L);
        using (MemoryLease<long> lease = array.Lease())
        {
            Assert.False(lease.Span.ContainsAnyExcept(-3L));
        }

        array.ParallelVectorFill(11L);
        using MemoryLease<long> final = array.Lease();
        Assert.False(final.Span.ContainsAnyExcept(11L));
    }

    [Fact]
    public void The_non_temporal_kernel_writes_exactly_the_elements_asked_for_at_any_start()
    {
        const int Guard = 256;
        int bytes = 200_000;
        byte* block = (byte*)NativeMemory.AlignedAlloc((nuint)(bytes + 2 * Guard), 64);
        try
        {
            foreach (int offset in new[] { 0, 1, 3, 8, 17, 63 })
            {
                foreach (int count in new[] { 100_000, 150_001 })
                {
                    new Span<byte>(block, bytes + 2 * Guard).Fill(0xEE);
                    var value = new Triple(0x11111111, 0x22222222, 0x33333333);
                    var destination = (Triple*)(block + Guard + offset);
                    int elements = count / sizeof(Triple);
                    bool streamed = NonTemporalFill.TryFill(destination, (nuint)elements, value);
                    Assert.Equal(NonTemporalFill.IsSupported, streamed);
                    if (!streamed)
                    {
                        continue;
                    }

                    Assert.False(new ReadOnlySpan<Triple>(destination, elements).ContainsAnyExcept(value));
                    Assert.False(new ReadOnlySpan<byte>(block, Guard + offset).ContainsAnyExcept((byte)0xEE));
                    byte* after = (byte*)(destination + elements);
                    Assert.False(new ReadOnlySpan<byte>(after, (int)(block + bytes + 2 * Guard - after)).ContainsAnyExcept((byte)0xEE));

                    ulong* longs = (ulong*)(block + Guard + (offset & ~7));
                    Assert.True(NonTemporalFill.TryFill(longs, 10_001, 0x0123456789ABCDEFUL));
                    Assert.False(new ReadOnlySpan<ulong>(longs, 10_001).ContainsAnyExcept(0x0123456789ABCDEFUL));
                }
            }

            Assert.False(NonTemporalFill.TryFill((long*)block, 16, 1L)); // too small to stream
        }
        finally
        {
            NativeMemory.AlignedFree(block);
        }
    }

    [Fact]
    public void Bad_arguments_throw()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SafeArray<int>(-1, 1, AllocationOptions.Default));
        Assert.Throws<ArgumentOutOfRangeException>(() => new HugeArray<int>(0L, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new HugeArray<int>(-5L, 1, AllocationOptions.Default));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedBuffer<int>(-1, 1, AllocationOptions.Default));
        Assert.Throws<NotSupportedException>(() => new FixedBuffer<decimal>(4, 1m));
        Assert.Throws<OverflowException>(() => new HugeArray<long>(long.MaxValue / 2, 1L));
    }

    [Fact]
    public void Memory_reused_from_a_freed_dirty_block_holds_the_value_not_the_old_data()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed block back at once; checked mode quarantines it.
        ReusedBlocksHoldTheValue();
        FillPolicy.NonTemporalThresholdBytes = 1 << 20;
        try
        {
            ReusedBlocksHoldTheValue();
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    private static void ReusedBlocksHoldTheValue()
    {
        // A small block comes back from the thread cache: the same address, old data in it.
        var old = new FixedBuffer<long>(100);
        old.Fill(-1L);
        nint address = old.Pointer;
        old.Free();
        var reused = new FixedBuffer<long>(100, 42L);
        try
        {
            Assert.Equal(address, reused.Pointer);
            Assert.All(reused.ToArray(), v => Assert.Equal(42L, v));
        }
        finally
        {
            reused.Free();
        }

        // A big block (past the zero-fill's page lookup, and streamed when the policy says so) comes back from a private
        // arena with its pages still present and dirty.
        uint arena = TestArena.Create();
        try
        {
            var options = new AllocationOptions(MallocxFlags.Arena(arena));
            int length = (int)(4 * ZeroFill.PageLookupThreshold / sizeof(ulong)) + 1001;
            nint bigAddress;
            using (var dirty = new SafeArray<ulong>(length, options))
            {
                bigAddress = dirty.Pointer;
                dirty.Fill(ulong.MaxValue);
            }

            using var again = new SafeArray<ulong>(length, 7UL, options);
            // The same pages: jemalloc may start a large block at a (random) offset inside its first
            // page, so compare by jemalloc's page (64 KiB on linux-arm64), not the address.
            nint pageMask = ~((nint)Jem.PageSize - 1);
            Assert.Equal(bigAddress & pageMask, again.Pointer & pageMask);
            using MemoryLease<ulong> lease = again.Lease();
            Assert.False(lease.Span.ContainsAnyExcept(7UL));
        }
        finally
        {
            TestArena.Destroy(arena);
        }
    }

    [Fact]
    public void Failures_throw_as_the_zeroing_constructors_do_and_leave_nothing_behind()
    {
        // Beyond the machine, and an alignment jemalloc cannot give.
        Assert.Throws<OutOfMemoryException>(() => new HugeArray<long>(1L << 56, 1L));
        Assert.Throws<OutOfMemoryException>(() => new SafeArray<long>(1000, 1L, new AllocationOptions(MallocxFlags.Align((nuint)1 << 62))));

        // Options the library refuses.
        Assert.Throws<ArgumentException>(() => new FixedBuffer<int>(4, 1, new AllocationOptions(MallocxFlags.Arena(Jem.ArenaCount + 5))));
        Assert.Throws<ArgumentException>(() => new SafeArray<int>(4, 1, new AllocationOptions(MallocxFlags.LgAlign(63))));

        // An arena's budget: refused before anything is written, nothing charged; within it, charged and given back.
        var arena = new JemArena(budgetBytes: 64 * 1024);
        AllocationOptions arenaOptions = arena.Options;
        Assert.Throws<ArenaBudgetExceededException>(() => new SafeArray<long>(16 * 1024, 1L, arenaOptions));
        Assert.Throws<ArenaBudgetExceededException>(() => new HugeArray<long>(16 * 1024L, 1L, arenaOptions));
        Assert.Throws<ArenaBudgetExceededException>(() => new FixedBuffer<long>(16 * 1024, 1L, arenaOptions));
        Assert.Equal(0, arena.UsedBytes);
        var fits = new FixedBuffer<long>(1024, 5L, arenaOptions);
        Assert.Equal(8 * 1024, arena.UsedBytes);
        Assert.All(fits.ToArray(), v => Assert.Equal(5L, v));
        fits.Free();
        Assert.Equal(0, arena.UsedBytes);

        // A destroyed arena.
        arena.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new SafeArray<long>(10, 1L, arenaOptions));
        Assert.Throws<ObjectDisposedException>(() => new FixedBuffer<long>(10, 1L, arenaOptions));
    }

    [StructLayout(LayoutKind.Sequential)]
    private readonly record struct Triple(int A, int B, int C);
}
