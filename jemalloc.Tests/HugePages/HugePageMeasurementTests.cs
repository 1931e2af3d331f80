using jemalloc.Memory;
using jemalloc.Tests.Support;
using jemalloc.Tests.Tuning;

namespace jemalloc.Tests.HugePages;

/// <summary>
/// The measured huge-page selection: the decision from two first-touch costs, the measurement on this
/// host, the settings that force either way, explicit options left alone, and one measurement however
/// many threads ask at once.
/// </summary>
[Collection(GlobalSettings.Name)]
public sealed class HugePageMeasurementTests
{
    private const long MiB = 1 << 20;

    [Theory]
    [InlineData(0L, false)]
    [InlineData((2L << 30) - 1, false)]
    [InlineData(2L << 30, true)]
    [InlineData(24L << 30, true)]
    public void The_probes_are_touched_only_where_the_process_can_get_sixteen_times_their_memory(long availableBytes, bool spared)
    {
        Assert.Equal(2L << 30, FirstTouchProbe.MinimumAvailableBytes);
        Assert.Equal(spared, FirstTouchProbe.CanSpareProbes(new MemoryAvailability((ulong)availableBytes, (ulong)availableBytes, "test")));
    }

    [Fact]
    public void Unknown_available_memory_does_not_stop_the_probes() => Assert.True(FirstTouchProbe.CanSpareProbes(null));

    [Theory]
    [InlineData(100.0, 50.0, true)]   // huge pages cheaper
    [InlineData(100.0, 100.0, true)]  // as dear
    [InlineData(100.0, 109.0, true)]  // dearer, within the margin
    [InlineData(100.0, 111.0, false)] // dearer, past the margin
    [InlineData(100.0, 300.0, false)] // the VM case: clearing huge pages three times dearer
    public void Huge_pages_are_chosen_unless_their_first_touch_is_dearer_by_more_than_the_margin(double normal, double huge, bool chosen)
    {
        HugePageMeasurement decided = HugePageMeasurement.Decide(TransparentHugePageMode.Madvise, normal, huge, 1.0, 16 * MiB, 5);

        Assert.Equal(chosen, decided.HugePages);
        Assert.True(decided.Measured);
        Assert.Equal(normal, decided.NormalPageMillisecondsPerGiB);
        Assert.Equal(huge, decided.HugePageMillisecondsPerGiB);
        Assert.StartsWith(chosen ? "huge pages:" : "4 KiB pages:", decided.Reason, StringComparison.Ordinal);
        Assert.Contains($"{huge:F0} ms/GiB in huge pages against {normal:F0} ms/GiB in 4 KiB pages", decided.Reason, StringComparison.Ordinal);
        Assert.Equal(decided.Reason, decided.ToString());
    }

    [Fact]
    public void The_margin_is_ten_percent_either_side_of_it()
    {
        Assert.Equal(0.10, HugePageMeasurement.Margin);
        Assert.True(HugePageMeasurement.Decide(TransparentHugePageMode.Always, 1000, 1099, 1.0, 16 * MiB, 5).HugePages);
        Assert.False(HugePageMeasurement.Decide(TransparentHugePageMode.Always, 1000, 1101, 1.0, 16 * MiB, 5).HugePages);
    }

    [Theory]
    [InlineData(100.0, 50.0, 0.0)] // cheaper, but the kernel gave the probe no huge page
    [InlineData(0.0, 50.0, 1.0)]   // a probe the clock could not time
    [InlineData(100.0, 0.0, 1.0)]
    [InlineData(double.NaN, 50.0, 1.0)]
    public void Without_huge_pages_given_or_figures_timed_the_choice_is_4_KiB_pages(double normal, double huge, double fraction)
    {
        HugePageMeasurement decided = HugePageMeasurement.Decide(TransparentHugePageMode.Madvise, normal, huge, fraction, 16 * MiB, 5);

        Assert.False(decided.HugePages);
        Assert.StartsWith("4 KiB pages:", decided.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Where_nothing_is_measured_the_choice_is_4_KiB_pages_and_says_why()
    {
        HugePageMeasurement none = HugePageMeasurement.NotMeasured(TransparentHugePageMode.Never, "the kernel offers none.");

        Assert.False(none.HugePages);
        Assert.False(none.Measured);
        Assert.Equal(0, none.NormalPageMillisecondsPerGiB);
        Assert.Equal(0, none.HugePageMillisecondsPerGiB);
        Assert.Equal("4 KiB pages, not measured: the kernel offers none.", none.Reason);
    }

    [Fact]
    public void The_measurement_on_this_host_gives_positive_costs_and_a_choice_consistent_with_them()
    {
        HugePagePolicy.ForgetMeasurementForTests();
        Assert.Null(HugePagePolicy.Measurement);

        HugePageMeasurement measured = HugePagePolicy.Measure();

        Assert.Equal(measured, HugePagePolicy.Measurement);
        Assert.Equal(HugePageInfo.Mode, measured.Mode);
        if (HugePageInfo.IsAvailable)
        {
            Assert.True(measured.Measured, measured.Reason);
            Assert.True(measured.NormalPageMillisecondsPerGiB > 0, measured.Reason);
            Assert.True(measured.HugePageMillisecondsPerGiB > 0, measured.Reason);
            Assert.InRange(measured.HugePageFraction, 0.0, 1.0);
            Assert.Equal(64 * MiB, measured.ProbeBytes);
            Assert.Equal(4, measured.Rounds);
            bool expected = measured.HugePageFraction > 0
                && measured.HugePageMillisecondsPerGiB <= measured.NormalPageMillisecondsPerGiB * (1 + HugePageMeasurement.Margin);
            Assert.Equal(expected, measured.HugePages);
        }
        else
        {
            Assert.False(measured.Measured);
            Assert.False(measured.HugePages);
            Assert.StartsWith("4 KiB pages, not measured:", measured.Reason, StringComparison.Ordinal);
        }

        // Made once: asking again measures nothing.
        long made = HugePagePolicy.Measurements;
        Assert.Equal(measured, HugePagePolicy.Measure());
        Assert.Equal(made, HugePagePolicy.Measurements);
    }

    [Fact]
    public void The_probes_leave_the_ledger_and_jemalloc_where_they_were()
    {
        HugePagePolicy.ForgetMeasurementForTests();
        long live = AllocationLedger.LiveCount;
        ulong allocated = MallctlKeys.Thread.Allocated.Get();
        ulong deallocated = MallctlKeys.Thread.Deallocated.Get();

        HugePageMeasurement measured = HugePagePolicy.Measure();

        Assert.Equal(live, AllocationLedger.LiveCount);
        ulong taken = MallctlKeys.Thread.Allocated.Get() - allocated;
        Assert.Equal(taken, MallctlKeys.Thread.Deallocated.Get() - deallocated);
        // Two probes through jemalloc where something was measured, nothing where not.
        Assert.Equal(measured.Measured ? 2UL * 64 * MiB : 0, taken);
    }

    [Fact]
    public void The_measured_selection_gives_arrays_without_options_what_the_measurement_chose()
    {
        using var measured = HugePageSelectionScope.Set(HugePageSelection.Measured);
        HugePagePolicy.ForgetMeasurementForTests();
        bool chosen = HugePagePolicy.DefaultForSize((nuint)(8 * MiB)).HugePages;

        // Where the kernel offers no huge pages the default asks nothing, so it measures nothing.
        Assert.Equal(HugePageInfo.IsAvailable, HugePagePolicy.Measurement is not null);
        Assert.Equal(HugePageInfo.IsAvailable && HugePagePolicy.Measure().HugePages, chosen);
        Assert.Equal(chosen, HugePagePolicy.DefaultFor<ulong>(MiB).HugePages);
        Assert.False(HugePagePolicy.DefaultForSize((nuint)(2 * MiB - 1)).HugePages);
        Assert.Contains(HugePagePolicy.Measure().Reason, HugePagePolicy.Describe(), StringComparison.Ordinal);
    }

    [Fact]
    public void Below_the_threshold_or_with_a_forced_selection_nothing_is_measured()
    {
        HugePagePolicy.ForgetMeasurementForTests();
        using (HugePageSelectionScope.Set(HugePageSelection.Measured))
        {
            Assert.False(HugePagePolicy.DefaultForSize((nuint)(MiB)).HugePages);
            Assert.Contains("not measured yet", HugePagePolicy.Describe(), StringComparison.Ordinal);
        }

        using (HugePageSelectionScope.Set(HugePageSelection.Always))
        {
            _ = HugePagePolicy.DefaultForSize((nuint)(64 * MiB));
        }

        using (HugePageSelectionScope.Set(HugePageSelection.Never))
        {
            _ = HugePagePolicy.DefaultForSize((nuint)(64 * MiB));
        }

        Assert.Null(HugePagePolicy.Measurement);
    }

    [Fact]
    public void The_settings_force_huge_pages_on_or_off_whatever_the_measurement()
    {
        using (HugePageSelectionScope.Set(HugePageSelection.Always))
        {
            Assert.Equal(HugePageSelection.Always, JemSettings.HugePageSelection);
            Assert.Equal(HugePageInfo.IsAvailable, HugePagePolicy.DefaultForSize((nuint)(8 * MiB)).HugePages);
            Assert.Equal(HugePageInfo.IsAvailable, HugePagePolicy.DefaultForBytes(8 * MiB, kernelOffersHugePages: true).HugePages && HugePageInfo.IsAvailable);
            Assert.True(HugePagePolicy.DefaultForBytes(8 * MiB, kernelOffersHugePages: true).HugePages);
            Assert.StartsWith("always huge pages from 2 MiB", HugePagePolicy.Describe(), StringComparison.Ordinal);
            Assert.Contains("HugePageSelection = always (HugePagePolicy.Selection, JEMALLOC_NET_HUGE_PAGES)", JemSettings.Describe().Split('\n'));
        }

        using (HugePageSelectionScope.Set(HugePageSelection.Measured))
        {
            JemSettings.HugePageSelection = HugePageSelection.Never;
            Assert.Equal(HugePageSelection.Never, HugePagePolicy.Selection);
            Assert.False(HugePagePolicy.DefaultForSize((nuint)(8 * MiB)).HugePages);
            Assert.False(HugePagePolicy.DefaultForBytes(1L << 40, kernelOffersHugePages: true).HugePages);
            Assert.Equal("never huge pages by default", HugePagePolicy.Describe());
        }

        // Where the kernel offers none, no selection asks.
        using (HugePageSelectionScope.Set(HugePageSelection.Always))
        {
            Assert.False(HugePagePolicy.DefaultForBytes(8 * MiB, kernelOffersHugePages: false).HugePages);
        }
    }

    [Fact]
    public void A_selection_that_is_not_one_of_the_three_is_refused_and_changes_nothing()
    {
        HugePageSelection was = HugePagePolicy.Selection;

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => HugePagePolicy.Selection = (HugePageSelection)7);
        Assert.Equal("value", error.ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => JemSettings.HugePageSelection = (HugePageSelection)(-1));
        Assert.Equal(was, HugePagePolicy.Selection);
    }

    [Theory]
    [InlineData("measured", HugePageSelection.Measured)]
    [InlineData("ALWAYS", HugePageSelection.Always)]
    [InlineData(" Never ", HugePageSelection.Never)]
    [InlineData("", null)]
    [InlineData("yes", null)]
    [InlineData("1", null)]
    [InlineData(null, null)]
    public void The_environment_variable_s_values_are_read_in_any_case(string? text, HugePageSelection? expected) =>
        Assert.Equal(expected, HugePagePolicy.ParseSelection(text));

    [Fact]
    public void Explicit_options_and_arenas_are_used_as_given_whatever_the_selection()
    {
        using (HugePageSelectionScope.Set(HugePageSelection.Never))
        {
            using var asked = new HugeArray<ulong>(8 * MiB / sizeof(ulong), AllocationOptions.WithHugePages);
            using var arena = new JemArena(hugePages: true);
            using var inArena = arena.CreateHugeArray<ulong>(8 * MiB / sizeof(ulong));
            if (Smaps.HugePagesOnRequest)
            {
                Assert.Equal(0, asked.Pointer % (2 * MiB));
                Assert.True(Smaps.AdvisedHuge(asked.Pointer, 8 * MiB), "Explicit WithHugePages was not advised under the never selection.");
                Assert.True(Smaps.AdvisedHuge(inArena.Pointer, 8 * MiB), "A huge-page arena's array was not advised under the never selection.");
            }
        }

        using (HugePageSelectionScope.Set(HugePageSelection.Always))
        {
            // A new arena maps fresh memory, which no earlier advice in this process reached.
            using var arena = new JemArena();
            using var plain = arena.CreateHugeArray<ulong>(8 * MiB / sizeof(ulong));
            Assert.False(Smaps.AdvisedHuge(plain.Pointer, 8 * MiB), "An arena without huge pages was advised under the always selection.");
        }
    }

    [Fact]
    public void Many_threads_asking_at_once_measure_once_and_see_the_same_choice()
    {
        using var measured = HugePageSelectionScope.Set(HugePageSelection.Measured);
        HugePagePolicy.ForgetMeasurementForTests();
        long before = HugePagePolicy.Measurements;
        const int Threads = 16;
        var results = new HugePageMeasurement[Threads];
        var options = new bool[Threads];
        using var start = new Barrier(Threads);
        var threads = Enumerable.Range(0, Threads).Select(i => new Thread(() =>
        {
            start.SignalAndWait();
            if (i % 2 == 0)
            {
                options[i] = HugePagePolicy.DefaultForSize((nuint)(8 * MiB)).HugePages;
                results[i] = HugePagePolicy.Measure();
            }
            else
            {
                results[i] = HugePagePolicy.Measure();
                options[i] = HugePageInfo.IsAvailable && results[i].HugePages;
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());

        Assert.Equal(before + 1, HugePagePolicy.Measurements);
        Assert.All(results, r => Assert.Equal(results[0], r));
        Assert.All(options, o => Assert.Equal(HugePageInfo.IsAvailable && results[0].HugePages, o));
    }
}
