namespace jemalloc.Tests.Tuning;

/// <summary>JemSettings is the same storage as each setting's older home: a change through either shows in both.</summary>
[Collection(GlobalSettings.Name)]
public sealed class JemSettingsTests
{
    [Fact]
    public void Each_setting_is_one_store_under_two_names()
    {
        long hugePages = HugePagePolicy.ThresholdBytes;
        long nonTemporal = FillPolicy.NonTemporalThresholdBytes;
        long quarantine = AllocationLedger.QuarantineBytes;
        bool stacks = AllocationLedger.CaptureStackTraces;
        try
        {
            JemSettings.HugePageThresholdBytes = 8L << 20;
            Assert.Equal(8L << 20, HugePagePolicy.ThresholdBytes);
            HugePagePolicy.ThresholdBytes = 16L << 20;
            Assert.Equal(16L << 20, JemSettings.HugePageThresholdBytes);

            using (Support.HugePageSelectionScope.Set(HugePageSelection.Measured))
            {
                JemSettings.HugePageSelection = HugePageSelection.Never;
                Assert.Equal(HugePageSelection.Never, HugePagePolicy.Selection);
                HugePagePolicy.Selection = HugePageSelection.Always;
                Assert.Equal(HugePageSelection.Always, JemSettings.HugePageSelection);
            }

            JemSettings.NonTemporalThresholdBytes = 123_456;
            Assert.Equal(123_456, FillPolicy.NonTemporalThresholdBytes);
            FillPolicy.NonTemporalThresholdBytes = FillPolicy.Never;
            Assert.Equal(FillPolicy.Never, JemSettings.NonTemporalThresholdBytes);

            JemSettings.QuarantineBytes = 3L << 20;
            Assert.Equal(3L << 20, AllocationLedger.QuarantineBytes);
            AllocationLedger.QuarantineBytes = 5L << 20;
            Assert.Equal(5L << 20, JemSettings.QuarantineBytes);

            JemSettings.CaptureStackTraces = !stacks;
            Assert.Equal(!stacks, AllocationLedger.CaptureStackTraces);
            AllocationLedger.CaptureStackTraces = stacks;
            Assert.Equal(stacks, JemSettings.CaptureStackTraces);

            Assert.Equal(AllocationLedger.CheckedMode, JemSettings.CheckedMode);
            Assert.Equal(Jem.RequestedConfiguration, JemSettings.NativeConfiguration);
        }
        finally
        {
            HugePagePolicy.ThresholdBytes = hugePages;
            FillPolicy.NonTemporalThresholdBytes = nonTemporal;
            AllocationLedger.QuarantineBytes = quarantine;
            AllocationLedger.CaptureStackTraces = stacks;
        }
    }

    [Fact]
    public void A_bad_value_is_refused_as_by_the_settings_older_home()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => JemSettings.HugePageThresholdBytes = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => JemSettings.NonTemporalThresholdBytes = -2);
        Assert.Throws<ArgumentOutOfRangeException>(() => JemSettings.HugePageSelection = (HugePageSelection)3);
        Assert.Throws<ArgumentOutOfRangeException>(() => JemSettings.QuarantineBytes = -1);
        // jemalloc is loaded by the tests around this one: its options can no longer change.
        _ = Jem.ArenaCount;
        Assert.Throws<InvalidOperationException>(() => JemSettings.NativeConfiguration = "narenas:2");
        Assert.Throws<ArgumentNullException>(() => JemSettings.NativeConfiguration = null!); // refused at compile time too ([DisallowNull])
        Assert.Throws<ArgumentException>(() => JemSettings.NativeConfiguration = "abort:true");
    }

    [Fact]
    public void Describe_lists_every_setting_with_its_value()
    {
        long hugePages = HugePagePolicy.ThresholdBytes;
        long quarantine = AllocationLedger.QuarantineBytes;
        try
        {
            HugePagePolicy.ThresholdBytes = 12_345_678;
            string text = JemSettings.Describe();
            string[] lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            string[] names = typeof(JemSettings).GetProperties().Select(p => p.Name).ToArray();
            Assert.Equal(7, names.Length);
            Assert.Equal(names.Length, lines.Length);
            foreach (string name in names)
            {
                Assert.Single(lines, l => l.StartsWith(name + " = ", StringComparison.Ordinal));
            }

            Assert.Contains("HugePageThresholdBytes = 12,345,678 bytes (HugePagePolicy.ThresholdBytes)", lines);
            Assert.Contains($"HugePageSelection = {HugePagePolicy.Selection.ToString().ToLowerInvariant()} (HugePagePolicy.Selection, JEMALLOC_NET_HUGE_PAGES)", lines);
            HugePagePolicy.ThresholdBytes = long.MaxValue;
            Assert.Contains("HugePageThresholdBytes = never (HugePagePolicy.ThresholdBytes)", JemSettings.Describe().Split('\n'));

            // The same value on a limit means there is none: never "never".
            AllocationLedger.QuarantineBytes = long.MaxValue;
            Assert.Single(JemSettings.Describe().Split('\n'), l => l.StartsWith("QuarantineBytes = no limit", StringComparison.Ordinal));
        }
        finally
        {
            HugePagePolicy.ThresholdBytes = hugePages;
            AllocationLedger.QuarantineBytes = quarantine;
        }
    }
}
