using jemalloc.Memory;
using jemalloc.Simd;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Simd;

/// <summary>
/// <see cref="FillPolicy"/> as the structures use it: the automatic choice, made once by the first
/// fill larger than the last-level cache and then kept; the explicit settings over it; and every big
/// write path (fills, create-with-value, copies into and out of structures, zeroed creation of a
/// reused block) writing exactly the values asked for, whichever stores it chose.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class FillPolicyTests : LeakCheckedTest
{
    private const ulong Value = 0x0123456789ABCDEFUL;

    // Elements of a fill just larger than the last-level cache: the size from which the choice applies.
    private static int BigLength => checked((int)(Cache / sizeof(ulong))) + 13;

    private static long Cache => FillPolicy.LastLevelCacheBytes;

    [Fact]
    public void The_first_fills_of_a_size_band_make_its_choice_once_and_later_fills_keep_it()
    {
        FillPolicy.ForgetAutomaticChoicesForTests();
        try
        {
            Assert.Empty(FillPolicy.AutomaticChoices);
            Assert.Contains("not chosen yet", FillPolicy.Describe(), StringComparison.Ordinal);

            // Below the cache: ordinary stores, nothing measured, no choice applies.
            long measuring = FillPolicy.MeasuringWrites;
            using (var small = new SafeArray<ulong>(BigLength - 14, Value))
            {
                AssertHolds(small, Value);
            }

            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((nuint)Cache - 1, mayMeasure: true));
            Assert.Equal(measuring, FillPolicy.MeasuringWrites);
            Assert.Empty(FillPolicy.AutomaticChoices);
            Assert.Null(FillPolicy.AutomaticChoiceFor(Cache - 1));

            // Fills in the first band (from the cache size to 4 times it) measure, one kernel each in
            // turn, until each kernel has written its fills.
            using var array = new HugeArray<ulong>(BigLength);
            int fills = 0;
            while (FillPolicy.AutomaticChoiceFor(Cache) is null && fills < (2 * FillMeasurement.SamplesNeeded) + 2)
            {
                array.Fill(Value + (ulong)fills);
                AssertHolds(array, Value + (ulong)fills);
                fills++;
            }

            Assert.Equal(measuring + fills, FillPolicy.MeasuringWrites);
            FillChoice choice = Assert.NotNull(FillPolicy.AutomaticChoiceFor(Cache));
            Assert.Equal(Cache, choice.FromBytes);
            Assert.Equal(4 * Cache, choice.ToBytes);
            Assert.True(choice.SamplesPerKernel >= FillMeasurement.SamplesNeeded, choice.ToString());
            Assert.True(choice.OrdinaryBytesPerSecond > 0 && choice.NonTemporalBytesPerSecond > 0, choice.ToString());
            Assert.Equal([choice], FillPolicy.AutomaticChoices);
            Assert.Contains(choice.ToString(), FillPolicy.Describe(), StringComparison.Ordinal);

            // Kept for the band: every later write in it uses it, nothing measures again; the next band has not chosen.
            FillKernel chosen = choice.NonTemporal ? FillKernel.NonTemporal : FillKernel.Ordinary;
            Assert.Equal(chosen, FillPolicy.KernelFor((nuint)Cache, mayMeasure: true));
            Assert.Equal(chosen, FillPolicy.KernelFor((nuint)(4 * Cache) - 1, mayMeasure: false));
            Assert.Equal(choice, FillPolicy.AutomaticChoiceFor((4 * Cache) - 1));
            Assert.Null(FillPolicy.AutomaticChoiceFor(4 * Cache));
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((nuint)(4 * Cache), mayMeasure: false));
            Assert.Equal(NonTemporalFill.IsSupported ? FillKernel.Undecided : FillKernel.Ordinary, FillPolicy.KernelFor((nuint)(4 * Cache), mayMeasure: true));
            array.Fill(~Value);
            array.VectorFill(Value);
            AssertHolds(array, Value);
            Assert.Equal(measuring + fills, FillPolicy.MeasuringWrites);
            Assert.Equal(choice, FillPolicy.AutomaticChoiceFor(Cache));
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Fact]
    public void Deciding_now_measures_every_band_on_a_scratch_block_and_the_bands_tile_the_sizes_above_the_cache()
    {
        FillPolicy.ForgetAutomaticChoicesForTests();
        try
        {
            long measuring = FillPolicy.MeasuringWrites;
            IReadOnlyList<FillChoice> choices = FillPolicy.DecideAutomaticChoices();
            Assert.Equal(measuring + FillPolicy.BandCount, FillPolicy.MeasuringWrites);
            Assert.Equal(FillPolicy.BandCount, choices.Count);
            Assert.Equal(Cache, choices[0].FromBytes);
            for (int band = 0; band < choices.Count; band++)
            {
                FillChoice choice = choices[band];
                Assert.True(choice.SamplesPerKernel >= FillMeasurement.SamplesNeeded, choice.ToString());
                Assert.Equal(band == choices.Count - 1 ? long.MaxValue : choices[band + 1].FromBytes, choice.ToBytes);
                Assert.Equal(choice, FillPolicy.AutomaticChoiceFor(choice.FromBytes));
                Assert.Contains(choice.ToString(), FillPolicy.Describe(), StringComparison.Ordinal);
            }

            Assert.Equal(choices, FillPolicy.AutomaticChoices);
            Assert.Equal(choices, FillPolicy.DecideAutomaticChoices());
            Assert.Equal(measuring + FillPolicy.BandCount, FillPolicy.MeasuringWrites);
            Assert.DoesNotContain("not chosen yet", FillPolicy.Describe(), StringComparison.Ordinal);
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Fact]
    public void Each_band_keeps_its_own_choice_so_a_host_where_streaming_wins_only_below_some_size_gets_both()
    {
        if (!NonTemporalFill.IsSupported)
        {
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((nuint)Cache, mayMeasure: true));
            return;
        }

        FillPolicy.ForgetAutomaticChoicesForTests();
        try
        {
            // The development host: streaming clearly faster a few times the cache, slower far beyond it.
            Feed(band: 0, ordinaryBytesPerSecond: 20e9, streamingBytesPerSecond: 30e9);
            Feed(band: 2, ordinaryBytesPerSecond: 9e9, streamingBytesPerSecond: 7e9);

            Assert.Equal(FillKernel.NonTemporal, FillPolicy.KernelFor((nuint)Cache, mayMeasure: false));
            Assert.Equal(FillKernel.NonTemporal, FillPolicy.KernelFor((nuint)(4 * Cache) - 1, mayMeasure: true));
            Assert.Equal(FillKernel.Undecided, FillPolicy.KernelFor((nuint)(4 * Cache), mayMeasure: true));
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((nuint)(16 * Cache), mayMeasure: true));
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: true));

            FillChoice first = Assert.NotNull(FillPolicy.AutomaticChoiceFor(2 * Cache));
            FillChoice last = Assert.NotNull(FillPolicy.AutomaticChoiceFor(long.MaxValue));
            Assert.True(first.NonTemporal);
            Assert.False(last.NonTemporal);
            Assert.Equal((16 * Cache, long.MaxValue), (last.FromBytes, last.ToBytes));
            Assert.Null(FillPolicy.AutomaticChoiceFor(8 * Cache));
            Assert.Equal([first, last], FillPolicy.AutomaticChoices);
            string described = FillPolicy.Describe();
            Assert.Contains(first.ToString(), described, StringComparison.Ordinal);
            Assert.Contains(last.ToString(), described, StringComparison.Ordinal);
            Assert.Contains("not chosen yet", described, StringComparison.Ordinal);

            // The plans a structure's fill follows, by its whole size.
            Assert.Equal(new FillPlan(FillKernel.NonTemporal, 0), SimdKernels.FillPlanFor<ulong>(Cache / sizeof(ulong)));
            Assert.Equal(new FillPlan(FillKernel.Ordinary, 2), SimdKernels.FillPlanFor<ulong>(2 * Cache));
            Assert.Equal(new FillPlan(FillKernel.Ordinary, -1), SimdKernels.FillPlanFor<ulong>((Cache / sizeof(ulong)) - 1));
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Fact]
    public void Bands_start_at_the_cache_size_and_grow_fourfold_and_a_negative_size_is_refused()
    {
        Assert.Equal(-1, FillPolicy.BandOf(0));
        Assert.Equal(-1, FillPolicy.BandOf((ulong)Cache - 1));
        Assert.Equal(0, FillPolicy.BandOf((ulong)Cache));
        Assert.Equal(0, FillPolicy.BandOf((4 * (ulong)Cache) - 1));
        Assert.Equal(1, FillPolicy.BandOf(4 * (ulong)Cache));
        Assert.Equal(1, FillPolicy.BandOf((16 * (ulong)Cache) - 1));
        Assert.Equal(2, FillPolicy.BandOf(16 * (ulong)Cache));
        Assert.Equal(2, FillPolicy.BandOf(ulong.MaxValue));
        Assert.Equal(FillPolicy.BandCount - 1, FillPolicy.BandOf(ulong.MaxValue));

        var thrown = Assert.Throws<ArgumentOutOfRangeException>(() => FillPolicy.AutomaticChoiceFor(-1));
        Assert.Equal("writeBytes", thrown.ParamName);
    }

    [Fact]
    public void Fills_racing_to_measure_take_turns_and_every_value_is_right()
    {
        const int Threads = 3;
        var arrays = new SafeArray<ulong>[Threads];
        for (int t = 0; t < Threads; t++)
        {
            arrays[t] = new SafeArray<ulong>(2 * BigLength);
        }

        try
        {
            long measuringBefore = FillPolicy.MeasuringWrites;
            long refusedBefore = FillPolicy.RefusedWrites;
            // Until fills have met: one measuring while another found it taken and used ordinary stores.
            for (int round = 0; round < 50 && FillPolicy.RefusedWrites == refusedBefore; round++)
            {
                FillPolicy.ForgetAutomaticChoicesForTests();
                ulong value = Value + (ulong)round;
                using var start = new Barrier(Threads);
                Workers.Run(Threads, t =>
                {
                    Assert.True(start.SignalAndWait(TimeSpan.FromSeconds(60)), "the fills did not start together");
                    arrays[t].Fill(value);
                });
                foreach (SafeArray<ulong> array in arrays)
                {
                    AssertHolds(array, value);
                }
            }

            Assert.True(FillPolicy.MeasuringWrites > measuringBefore, "no fill measured");
            Assert.True(FillPolicy.RefusedWrites > refusedBefore, "no fill ever found another measuring");
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
            foreach (SafeArray<ulong> array in arrays)
            {
                array.Dispose();
            }
        }
    }

    [Fact]
    public void Measuring_fills_of_an_odd_sized_element_write_every_element_exactly()
    {
        // 3 bytes: the streaming pattern repeats every 3 elements and the block's end is not a
        // whole vector, so each kernel's turn must still write every element exactly.
        using var array = new SafeArray<Rgb>(checked((int)(Cache / 3)) + 7);
        FillPolicy.ForgetAutomaticChoicesForTests();
        try
        {
            long measuringBefore = FillPolicy.MeasuringWrites;
            for (int fill = 0; fill < 4; fill++)
            {
                var value = new Rgb((byte)(fill + 1), (byte)(0x40 + fill), (byte)(0x80 + fill));
                array.Fill(value);
                AssertHolds(array, value);
            }

            Assert.True(FillPolicy.MeasuringWrites - measuringBefore >= 2, "fewer than two fills measured: one kernel's turn was not tested");
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Fact]
    public void A_parallel_fill_or_a_copy_does_not_measure_while_no_choice_is_made()
    {
        FillPolicy.ForgetAutomaticChoicesForTests();
        try
        {
            long measuring = FillPolicy.MeasuringWrites;
            using var array = new HugeArray<ulong>(2L * BigLength);
            array.ParallelVectorFill(Value);
            AssertHolds(array, Value);
            using var copy = new HugeArray<ulong>(2L * BigLength);
            using (MemoryLease<ulong> lease = array.Lease())
            {
                copy.CopyFrom(lease.Span, 0);
            }

            AssertHolds(copy, Value);
            Assert.Equal(measuring, FillPolicy.MeasuringWrites);
            Assert.Empty(FillPolicy.AutomaticChoices);
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: false));
            Assert.Equal(NonTemporalFill.IsSupported ? FillKernel.Undecided : FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: true));
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Fact]
    public void Explicit_settings_override_the_automatic_choice_and_measure_nothing()
    {
        FillPolicy.ForgetAutomaticChoicesForTests();
        FillKernel streaming = NonTemporalFill.IsSupported ? FillKernel.NonTemporal : FillKernel.Ordinary;
        try
        {
            long measuring = FillPolicy.MeasuringWrites;
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Never;
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: true));
            Assert.StartsWith("never stream", FillPolicy.Describe(), StringComparison.Ordinal);
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Always;
            Assert.Equal(streaming, FillPolicy.KernelFor(1, mayMeasure: true));
            Assert.StartsWith("always stream", FillPolicy.Describe(), StringComparison.Ordinal);
            FillPolicy.NonTemporalThresholdBytes = 1 << 20;
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((1 << 20) - 1, mayMeasure: true));
            Assert.Equal(streaming, FillPolicy.KernelFor(1 << 20, mayMeasure: true));
            Assert.Contains("1,048,576 bytes or more", FillPolicy.Describe(), StringComparison.Ordinal);
            using (var array = new SafeArray<ulong>(2 * BigLength, Value))
            {
                AssertHolds(array, Value);
            }

            Assert.Equal(measuring, FillPolicy.MeasuringWrites);
            Assert.Empty(FillPolicy.AutomaticChoices);
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
            FillPolicy.ForgetAutomaticChoicesForTests();
        }
    }

    [Theory]
    [InlineData(FillPolicy.Always)]
    [InlineData(FillPolicy.Never)]
    public void Copies_into_and_out_of_every_structure_are_exact_at_any_offset(long threshold)
    {
        FillPolicy.NonTemporalThresholdBytes = threshold;
        try
        {
            const int Length = 40_000; // 320 KB of longs: past the streaming kernel's floor
            long[] source = new long[Length + 7];
            for (int i = 0; i < source.Length; i++)
            {
                source[i] = unchecked((i * -0x61C8864680B583EBL) ^ i);
            }

            foreach (int offset in new[] { 0, 1, 3, 7 })
            {
                ReadOnlySpan<long> from = source.AsSpan(offset, Length);
                using (var created = new SafeArray<long>(from))
                {
                    Assert.True(created.SequenceEqual(from));
                    Assert.Equal(from.ToArray(), created.ToArray());
                    long[] back = new long[Length + 9];
                    created.CopyTo(back.AsSpan(offset));
                    Assert.True(back.AsSpan(offset, Length).SequenceEqual(from));
                    Assert.False(back.AsSpan(0, offset).ContainsAnyExcept(0L));
                    Assert.False(back.AsSpan(offset + Length).ContainsAnyExcept(0L));

                    // From the structure into itself, overlapping: as memmove.
                    using MemoryLease<long> lease = created.Lease();
                    created.CopyFrom(lease.Span[..(Length - offset - 1)], offset + 1);
                    Assert.True(lease.Span[(offset + 1)..].SequenceEqual(from[..(Length - offset - 1)]));
                }

                using (var huge = new HugeArray<long>(Length + 16))
                {
                    huge.CopyFrom(from, offset);
                    long[] back = new long[Length - 5];
                    huge.CopyTo(back, offset + 5);
                    Assert.True(back.AsSpan().SequenceEqual(from[5..]));
                }

                var buffer = new FixedBuffer<long>(from);
                try
                {
                    Assert.Equal(from.ToArray(), buffer.ToArray());
                    buffer.CopyFrom(source.AsSpan(0, Length - offset), offset);
                    long[] back = new long[Length];
                    buffer.CopyTo(back);
                    Assert.True(back.AsSpan(offset).SequenceEqual(source.AsSpan(0, Length - offset)));
                    Assert.True(back.AsSpan(0, offset).SequenceEqual(from[..offset]));
                }
                finally
                {
                    buffer.Free();
                }
            }
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    [Theory]
    [InlineData(FillPolicy.Always)]
    [InlineData(FillPolicy.Never)]
    public void A_reused_dirty_block_is_created_zeroed_whichever_stores_clear_it(long threshold)
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed block back at once; checked mode quarantines it.
        FillPolicy.NonTemporalThresholdBytes = threshold;
        uint arena = TestArena.Create();
        try
        {
            var options = new AllocationOptions(MallocxFlags.Arena(arena));
            // Below the zero-fill's page lookup (cleared in full) and above it (only present pages cleared).
            foreach (int length in new[] { 100_003, (int)(4 * ZeroFill.PageLookupThreshold / sizeof(ulong)) + 1001 })
            {
                nint address;
                using (var dirty = new SafeArray<ulong>(length, ulong.MaxValue, options))
                {
                    address = dirty.Pointer;
                }

                using var zeroed = new SafeArray<ulong>(length, options);
                nint pageMask = ~((nint)Jem.PageSize - 1);
                Assert.Equal(address & pageMask, zeroed.Pointer & pageMask);
                AssertHolds(zeroed, 0UL);
            }
        }
        finally
        {
            TestArena.Destroy(arena);
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
        }
    }

    // One band's measurement fed fills at the given true speeds, alternating kernels, until it decides.
    private static void Feed(int band, double ordinaryBytesPerSecond, double streamingBytesPerSecond)
    {
        const long FillBytes = 80_000_000;
        Assert.True(FillPolicy.TryBeginMeasuring(band), $"band {band} is being measured or has chosen");
        for (int i = 0; i < FillMeasurement.SamplesNeeded; i++)
        {
            FillPolicy.Measurement(band).Add(nonTemporal: false, FillBytes, FillBytes / ordinaryBytesPerSecond);
            FillPolicy.Measurement(band).Add(nonTemporal: true, FillBytes, FillBytes / streamingBytesPerSecond);
        }

        FillPolicy.EndMeasuring(band);
        Assert.Equal(streamingBytesPerSecond > ordinaryBytesPerSecond ? FillKernel.NonTemporal : FillKernel.Ordinary, FillPolicy.Decided(band));
    }

    private static void AssertHolds<T>(NativeBuffer<T> structure, T value)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = structure.Lease();
        foreach (ReadOnlySpan<T> chunk in lease.GetChunks())
        {
            Assert.False(chunk.ContainsAnyExcept(value));
        }
    }

    private readonly record struct Rgb(byte R, byte G, byte B);
}
