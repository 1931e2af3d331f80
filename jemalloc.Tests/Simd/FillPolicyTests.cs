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
    private static int BigLength => checked((int)(FillPolicy.LastLevelCacheBytes / sizeof(ulong))) + 13;

    [Fact]
    public void The_first_fill_larger_than_the_cache_makes_the_choice_once_and_later_fills_keep_it()
    {
        FillPolicy.ForgetAutomaticChoiceForTests();
        try
        {
            Assert.Null(FillPolicy.AutomaticChoice);
            Assert.Contains("not chosen yet", FillPolicy.Describe(), StringComparison.Ordinal);

            // Below the cache: ordinary stores, nothing measured.
            long measuring = FillPolicy.MeasuringWrites;
            using (var small = new SafeArray<ulong>(BigLength - 14, Value))
            {
                AssertHolds(small, Value);
            }

            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor((nuint)FillPolicy.LastLevelCacheBytes - 1, mayMeasure: true));
            Assert.Equal(measuring, FillPolicy.MeasuringWrites);
            Assert.Null(FillPolicy.AutomaticChoice);

            // A fill long enough for the slices needed measures (its untimed first part is the cache's size) and chooses.
            using var array = new HugeArray<ulong>(BigLength + ((2L * FillMeasurement.SamplesNeeded + 2) * (long)SimdKernels.SliceBytes / sizeof(ulong)));
            array.Fill(Value);
            Assert.Equal(measuring + 1, FillPolicy.MeasuringWrites);
            FillChoice choice = Assert.NotNull(FillPolicy.AutomaticChoice);
            Assert.True(choice.SamplesPerKernel >= FillMeasurement.SamplesNeeded, choice.ToString());
            Assert.True(choice.OrdinaryBytesPerSecond > 0 && choice.NonTemporalBytesPerSecond > 0, choice.ToString());
            AssertHolds(array, Value);
            Assert.Contains(choice.ToString(), FillPolicy.Describe(), StringComparison.Ordinal);

            // Kept: every later write of that size uses it, nothing measures again.
            FillKernel chosen = choice.NonTemporal ? FillKernel.NonTemporal : FillKernel.Ordinary;
            Assert.Equal(chosen, FillPolicy.KernelFor((nuint)FillPolicy.LastLevelCacheBytes, mayMeasure: true));
            Assert.Equal(chosen, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: false));
            array.Fill(~Value);
            array.VectorFill(Value);
            AssertHolds(array, Value);
            Assert.Equal(measuring + 1, FillPolicy.MeasuringWrites);
            Assert.Equal(choice, FillPolicy.AutomaticChoice);
            Assert.Equal(choice, FillPolicy.DecideAutomaticChoice());
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoiceForTests();
        }
    }

    [Fact]
    public void Deciding_now_measures_on_a_scratch_block_when_no_fill_has()
    {
        FillPolicy.ForgetAutomaticChoiceForTests();
        try
        {
            long measuring = FillPolicy.MeasuringWrites;
            FillChoice choice = FillPolicy.DecideAutomaticChoice();
            Assert.Equal(measuring + 1, FillPolicy.MeasuringWrites);
            Assert.True(choice.SamplesPerKernel >= FillMeasurement.SamplesNeeded, choice.ToString());
            Assert.Equal(choice, FillPolicy.AutomaticChoice);
            Assert.Equal(choice, FillPolicy.DecideAutomaticChoice());
            Assert.Equal(measuring + 1, FillPolicy.MeasuringWrites);
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoiceForTests();
        }
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
                FillPolicy.ForgetAutomaticChoiceForTests();
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
            FillPolicy.ForgetAutomaticChoiceForTests();
            foreach (SafeArray<ulong> array in arrays)
            {
                array.Dispose();
            }
        }
    }

    [Fact]
    public void A_parallel_fill_or_a_copy_does_not_measure_while_no_choice_is_made()
    {
        FillPolicy.ForgetAutomaticChoiceForTests();
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
            Assert.Null(FillPolicy.AutomaticChoice);
            Assert.Equal(FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: false));
            Assert.Equal(NonTemporalFill.IsSupported ? FillKernel.Undecided : FillKernel.Ordinary, FillPolicy.KernelFor(nuint.MaxValue, mayMeasure: true));
        }
        finally
        {
            FillPolicy.ForgetAutomaticChoiceForTests();
        }
    }

    [Fact]
    public void Explicit_settings_override_the_automatic_choice_and_measure_nothing()
    {
        FillPolicy.ForgetAutomaticChoiceForTests();
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
            Assert.Null(FillPolicy.AutomaticChoice);
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Automatic;
            FillPolicy.ForgetAutomaticChoiceForTests();
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

    private static void AssertHolds<T>(NativeBuffer<T> structure, T value)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = structure.Lease();
        foreach (ReadOnlySpan<T> chunk in lease.GetChunks())
        {
            Assert.False(chunk.ContainsAnyExcept(value));
        }
    }
}
