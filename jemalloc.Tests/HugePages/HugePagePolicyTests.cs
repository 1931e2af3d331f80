using jemalloc.Tests.Support;
using jemalloc.Tests.Tuning;

namespace jemalloc.Tests.HugePages;

[Collection(GlobalSettings.Name)]
public sealed class HugePagePolicyTests
{
    private const long MiB = 1 << 20;

    [Fact]
    public void Arrays_from_the_threshold_up_ask_for_huge_pages_where_the_kernel_offers_them()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        Assert.Equal(2 * MiB, HugePagePolicy.DefaultThresholdBytes);
        Assert.Equal(2 * MiB, HugePagePolicy.ThresholdBytes);
        Assert.Equal(AllocationOptions.WithHugePages, HugePagePolicy.DefaultForBytes(2 * MiB, kernelOffersHugePages: true));
        Assert.Equal(AllocationOptions.WithHugePages, HugePagePolicy.DefaultForBytes(long.MaxValue, kernelOffersHugePages: true));
        Assert.Equal(AllocationOptions.Default, HugePagePolicy.DefaultForBytes(2 * MiB - 1, kernelOffersHugePages: true));
        Assert.Equal(AllocationOptions.Default, HugePagePolicy.DefaultForBytes(0, kernelOffersHugePages: true));
        Assert.Equal(AllocationOptions.Default, HugePagePolicy.DefaultForBytes(1024 * MiB, kernelOffersHugePages: false));
    }

    [Fact]
    public void Huge_pages_asked_for_are_given_only_to_an_allocation_that_holds_a_whole_huge_page()
    {
        Assert.True(HugePagePolicy.Advises((nuint)(2 * MiB), asked: true));
        Assert.True(HugePagePolicy.Advises((nuint)(64 * MiB), asked: true));
        Assert.False(HugePagePolicy.Advises((nuint)(2 * MiB - 1), asked: true));
        Assert.False(HugePagePolicy.Advises((nuint)(64 * MiB), asked: false));
    }

    [Fact]
    public void Record_structures_made_without_options_ask_the_policy_for_their_memory_as_arrays_do()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        // Huge-page options align an allocation to a huge page; without them a large block is only
        // page-aligned. Where the kernel offers none, the policy gives every size the default options.
        long alignment = HugePageInfo.IsAvailable ? 2 * MiB : 1;
        Assert.Equal(HugePageInfo.IsAvailable, HugePagePolicy.DefaultForSize((nuint)(4 * MiB)).HugePages);
        using var index = new NativeHashIndex<long>();
        for (long key = 0; index.TableBytes < 4 * MiB; key++)
        {
            index.Set(key, key);
        }

        AllocationInfo table = Assert.Single(AllocationLedger.Snapshot(), a => a.Kind == AllocationKind.HugeBuffer && a.Size == (nuint)index.TableBytes);
        Assert.Equal(0, table.Address % alignment);

        using var store = new Utf8StringStore();
        store.Add(new string('x', (int)(3 * MiB)));
        AllocationInfo block = Assert.Single(AllocationLedger.Snapshot(), a => a.Kind == AllocationKind.StringStoreBlock && a.Size >= (nuint)(3 * MiB));
        Assert.Equal(0, block.Address % alignment);
    }

    [Fact]
    public void The_default_for_a_byte_size_follows_the_threshold_in_force()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        bool offered = HugePageInfo.IsAvailable;
        try
        {
            Assert.Equal(offered, HugePagePolicy.DefaultForSize((nuint)(2 * MiB)).HugePages);
            Assert.False(HugePagePolicy.DefaultForSize((nuint)(2 * MiB - 1)).HugePages);
            HugePagePolicy.ThresholdBytes = 8 * MiB;
            Assert.False(HugePagePolicy.DefaultForSize((nuint)(4 * MiB)).HugePages);
            Assert.Equal(offered, HugePagePolicy.DefaultForSize((nuint)(8 * MiB)).HugePages);
            Assert.Equal(offered, HugePagePolicy.DefaultForSize(nuint.MaxValue).HugePages);
        }
        finally
        {
            HugePagePolicy.ThresholdBytes = HugePagePolicy.DefaultThresholdBytes;
        }
    }

    [Fact]
    public void Element_counts_are_turned_into_bytes_without_overflow()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        bool offered = HugePageInfo.IsAvailable;
        Assert.Equal(offered, HugePagePolicy.DefaultFor<ulong>(MiB / 4).HugePages);
        Assert.False(HugePagePolicy.DefaultFor<ulong>(MiB / 4 - 1).HugePages);
        Assert.Equal(offered, HugePagePolicy.DefaultFor<ulong>(long.MaxValue).HugePages);
        Assert.False(HugePagePolicy.DefaultFor<byte>(-5).HugePages);
    }

    [Fact]
    public void The_threshold_can_be_changed_and_switched_off_but_not_negative()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        try
        {
            HugePagePolicy.ThresholdBytes = 64 * MiB;
            Assert.Equal(64 * MiB, HugePagePolicy.ThresholdBytes);
            Assert.False(HugePagePolicy.DefaultForBytes(32 * MiB, kernelOffersHugePages: true).HugePages);
            Assert.True(HugePagePolicy.DefaultForBytes(64 * MiB, kernelOffersHugePages: true).HugePages);

            HugePagePolicy.ThresholdBytes = long.MaxValue;
            Assert.False(HugePagePolicy.DefaultForBytes(1L << 40, kernelOffersHugePages: true).HugePages);
            Assert.Throws<ArgumentOutOfRangeException>(() => HugePagePolicy.ThresholdBytes = -1);
            Assert.Equal(long.MaxValue, HugePagePolicy.ThresholdBytes);
        }
        finally
        {
            HugePagePolicy.ThresholdBytes = HugePagePolicy.DefaultThresholdBytes;
        }
    }

    [Fact]
    public void A_big_array_created_without_options_under_the_always_selection_is_advised_for_huge_pages_on_this_machine()
    {
        using var always = HugePageSelectionScope.Set(HugePageSelection.Always); // what this test checks is the selection that asks
        using var huge = new HugeArray<ulong>(8 * MiB / sizeof(ulong));
        using var safe = new SafeArray<ulong>((int)(4 * MiB / sizeof(ulong)));
        huge.Fill(3);
        safe.Fill(3);

        HugePageReport hugeReport = HugePageInfo.Query(huge);
        HugePageReport safeReport = HugePageInfo.Query(safe);

        // The policy's effect: 2 MiB-aligned blocks advised for huge pages (MADV_HUGEPAGE, "hg" in the
        // kernel's smaps). How many huge pages the kernel then gives depends on its free memory and on
        // whether jemalloc reused pages it kept, so the count is checked on fresh memory
        // (HugePageInfoTests, JemArenaTests) rather than here.
        Assert.Equal(Smaps.HugePagesOnRequest, HugePageInfo.IsAvailable);
        if (Smaps.HugePagesOnRequest)
        {
            Assert.Equal(0, huge.Pointer % (2 * MiB));
            Assert.Equal(0, safe.Pointer % (2 * MiB));
            Assert.True(Smaps.AdvisedHuge(huge.Pointer, 8 * MiB), "The HugeArray's range is not advised for huge pages.");
            Assert.True(Smaps.AdvisedHuge(safe.Pointer, 4 * MiB), "The SafeArray's range is not advised for huge pages.");
            Assert.True(hugeReport.Eligible ?? true, hugeReport.Explanation);
            Assert.True(safeReport.Eligible ?? true, safeReport.Explanation);
        }
        else
        {
            Assert.Equal(0, hugeReport.HugePageBytes);
            Assert.Equal(0, safeReport.HugePageBytes);
        }
    }
}
