using jemalloc.HugePages;
using jemalloc.Tests.Tuning;

namespace jemalloc.Tests.HugePages;

[Collection(GlobalSettings.Name)]
public sealed unsafe class HugePageInfoTests
{
    private const int MiB = 1 << 20;

    // Two mappings: 0x200000-0x800000 (6 MiB, 4 MiB of it in huge pages, eligible) and
    // 0x800000-0x900000 (1 MiB, not eligible).
    private const string Smaps = """
        00200000-00800000 rw-p 00000000 00:00 0
        Size:               6144 kB
        Rss:                6144 kB
        AnonHugePages:      4096 kB
        THPeligible:    1
        VmFlags: rd wr mr mw me ac hg
        00800000-00900000 rw-p 00000000 00:00 0 [heap]
        Size:               1024 kB
        Rss:                 512 kB
        AnonHugePages:         0 kB
        THPeligible:    0
        """;

    [Fact]
    public void Huge_page_request_is_honoured_on_this_machine_as_smaps_shows()
    {
        // A new arena maps fresh memory: pages jemalloc kept from an earlier 4 KiB-backed block would
        // stay 4 KiB pages.
        using var arena = new JemArena(hugePages: true);
        using var array = arena.CreateHugeArray<ulong>(8 * MiB / sizeof(ulong));
        Assert.Equal(0, array.Pointer % (2 * MiB));
        array.Fill(1);

        HugePageReport report = HugePageInfo.Query(array);

        Assert.Equal(HugePageInfo.Mode, report.Mode);
        Assert.Equal((nuint)(8 * MiB), report.Length);
        // Where huge pages are unavailable (Windows, arm64) the report reads no smaps and says why.
        Assert.Equal(report.Mode == TransparentHugePageMode.Unavailable ? 0 : 8 * MiB, report.ResidentBytes);
        // The kernel's own smaps, read by the test: the advised, written range is in huge pages
        // whenever the kernel gives them on request (madvise or always mode).
        Assert.Equal(Support.Smaps.HugePagesOnRequest, report.IsAvailable);
        if (Support.Smaps.HugePagesOnRequest)
        {
            Assert.Equal(8 * MiB, Support.Smaps.AnonHugePageBytes(array.Pointer, 8 * MiB));
            Assert.True(Support.Smaps.AdvisedHuge(array.Pointer, 8 * MiB));
            Assert.Equal(8 * MiB, report.HugePageBytes);
            Assert.True(report.HasHugePages);
            Assert.Equal(1.0, report.HugePageFraction);
            Assert.True(report.Eligible);
            Assert.Contains("huge pages", report.Explanation, StringComparison.Ordinal);
        }
        else
        {
            Assert.Equal(0, report.HugePageBytes);
        }
    }

    [Fact]
    public void Memory_that_does_not_ask_gets_no_huge_pages_in_madvise_mode()
    {
        // A new arena maps fresh memory: memory other tests advised and freed keeps its advice when
        // jemalloc reuses it, so an automatic arena could hand this test huge pages it never asked for.
        using var arena = new JemArena();
        using var array = arena.CreateArray<ulong>(8 * MiB / sizeof(ulong));
        array.Fill(1);

        HugePageReport report = HugePageInfo.Query(array);

        if (report.Mode != TransparentHugePageMode.Always)
        {
            Assert.Equal(0, report.HugePageBytes);
            Assert.False(report.HasHugePages);
        }

        // Where huge pages are unavailable (Windows, arm64) the report reads no smaps: nothing resident to count.
        Assert.True(report.Mode == TransparentHugePageMode.Unavailable ? report.ResidentBytes == 0 : report.ResidentBytes >= 8 * MiB - 4096);
    }

    [Fact]
    public void An_arena_with_huge_pages_gets_them_for_its_raw_memory()
    {
        using var arena = new JemArena(hugePages: true);
        byte* memory = (byte*)arena.Allocate(4 * MiB);
        Assert.Equal(0, (long)memory % (2 * MiB));
        new Span<byte>(memory, 4 * MiB).Fill(7);

        HugePageReport report = HugePageInfo.Query(memory, 4 * MiB);

        long expected = Support.Smaps.HugePagesOnRequest ? 4 * MiB : 0;
        Assert.Equal(expected, Support.Smaps.AnonHugePageBytes((nint)memory, 4 * MiB));
        Assert.Equal(expected, report.HugePageBytes);
        arena.Free(memory);
    }

    [Fact]
    public void Queries_of_freed_structures_and_bad_ranges_are_refused()
    {
        var array = new HugeArray<byte>(4096);
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(() => HugePageInfo.Query(array));
        Assert.Throws<ArgumentNullException>(() => HugePageInfo.Query((HugeArray<byte>)null!));
        Assert.Throws<ArgumentNullException>(() => HugePageInfo.Query((SafeArray<byte>)null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => HugePageInfo.Query((nint)4096, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => HugePageInfo.Query(-4096, 8192));
        if (HugePageInfo.Mode != TransparentHugePageMode.Unavailable)
        {
            // The first page of the address space is never mapped.
            Assert.Throws<ArgumentException>(() => HugePageInfo.Query((nint)0, 4096));
        }
        else
        {
            // Where huge pages are unavailable (Windows, arm64) no smaps is read, so the range is not
            // checked: the report says why there is nothing to tell.
            HugePageReport report = HugePageInfo.Query((nint)0, 4096);
            Assert.Equal(0, report.HugePageBytes);
            Assert.False(string.IsNullOrEmpty(report.Explanation));
        }
    }

    [Theory]
    [InlineData("always [madvise] never\n", TransparentHugePageMode.Madvise)]
    [InlineData("[always] madvise never\n", TransparentHugePageMode.Always)]
    [InlineData("always madvise [never]\n", TransparentHugePageMode.Never)]
    [InlineData("never", TransparentHugePageMode.Never)]
    [InlineData("[something-new]", TransparentHugePageMode.Unavailable)]
    [InlineData(null, TransparentHugePageMode.Unavailable)]
    public void The_kernel_mode_is_read_from_the_bracketed_word(string? enabled, TransparentHugePageMode expected) =>
        Assert.Equal(expected, HugePageProbe.ReadMode(new FakeHugePageSource(true, enabled, Smaps)));

    [Fact]
    public void The_mode_reported_for_this_machine_is_its_sysfs_setting()
    {
        string path = "/sys/kernel/mm/transparent_hugepage/enabled";
        // Reported on x64 Linux only; elsewhere (Windows, arm64) the library says unavailable, whatever sysfs says.
        TransparentHugePageMode expected = OperatingSystem.IsLinux() && System.Runtime.InteropServices.RuntimeInformation.ProcessArchitecture == System.Runtime.InteropServices.Architecture.X64 && File.Exists(path)
            ? HugePageProbe.ReadMode(new FakeHugePageSource(true, File.ReadAllText(path), null))
            : TransparentHugePageMode.Unavailable;
        Assert.Equal(expected, HugePageInfo.Mode);
        Assert.Equal(expected is TransparentHugePageMode.Madvise or TransparentHugePageMode.Always, HugePageInfo.IsAvailable);
    }

    [Fact]
    public void Huge_pages_are_attributed_per_mapping_up_to_the_overlap()
    {
        var source = new FakeHugePageSource(true, "always [madvise] never", Smaps);

        HugePageReport whole = HugePageProbe.Query(0x200000, 6 * MiB, source);
        Assert.Equal(4 * MiB, whole.HugePageBytes);
        Assert.Equal(6 * MiB, whole.ResidentBytes);
        Assert.True(whole.Eligible);
        Assert.Contains("4,194,304 of the range's 6,291,456 bytes", whole.Explanation, StringComparison.Ordinal);

        HugePageReport part = HugePageProbe.Query(0x600000, 2 * MiB, source);
        Assert.Equal(2 * MiB, part.HugePageBytes);
        Assert.Equal(2 * MiB, part.ResidentBytes);

        HugePageReport across = HugePageProbe.Query(0x700000, 2 * MiB, source);
        Assert.Equal(1 * MiB, across.HugePageBytes);
        Assert.Equal(MiB + 512 * 1024, across.ResidentBytes);
        Assert.False(across.Eligible);
    }

    [Fact]
    public void A_mapping_not_eligible_and_without_huge_pages_is_explained()
    {
        var source = new FakeHugePageSource(true, "always [madvise] never", Smaps);
        HugePageReport report = HugePageProbe.Query(0x800000, MiB, source);
        Assert.Equal(0, report.HugePageBytes);
        Assert.False(report.Eligible);
        Assert.Contains("not consider this memory eligible", report.Explanation, StringComparison.Ordinal);
        Assert.Equal(report.Explanation, report.ToString());
    }

    [Fact]
    public void Untouched_and_small_page_memory_is_explained()
    {
        const string untouched = """
            00200000-00400000 rw-p 00000000 00:00 0
            Rss:                   0 kB
            AnonHugePages:         0 kB
            THPeligible:    1
            """;
        HugePageReport notYet = HugePageProbe.Query(0x200000, 2 * MiB, new FakeHugePageSource(true, "[madvise]", untouched));
        Assert.Contains("first written", notYet.Explanation, StringComparison.Ordinal);

        HugePageReport small = HugePageProbe.Query(0x200000, 2 * MiB, new FakeHugePageSource(true, "[madvise]", untouched.Replace("Rss:                   0", "Rss:                2048", StringComparison.Ordinal)));
        Assert.Contains("4 KiB pages", small.Explanation, StringComparison.Ordinal);
        Assert.Equal(2 * MiB, small.ResidentBytes);
    }

    [Fact]
    public void Mode_never_reports_no_huge_pages_and_says_why()
    {
        var source = new FakeHugePageSource(true, "always madvise [never]", Smaps.Replace("AnonHugePages:      4096", "AnonHugePages:         0", StringComparison.Ordinal));
        HugePageReport report = HugePageProbe.Query(0x200000, 2 * MiB, source);
        Assert.Equal(TransparentHugePageMode.Never, report.Mode);
        Assert.False(report.IsAvailable);
        Assert.Equal(0, report.HugePageBytes);
        Assert.Contains("switched off", report.Explanation, StringComparison.Ordinal);
    }

    [Fact]
    public void No_sysfs_file_and_not_linux_report_unavailable_without_reading_smaps()
    {
        HugePageReport noThp = HugePageProbe.Query(0x200000, MiB, new FakeHugePageSource(true, null, null));
        Assert.Equal(TransparentHugePageMode.Unavailable, noThp.Mode);
        Assert.Contains("kernel offers no transparent huge pages", noThp.Explanation, StringComparison.Ordinal);
        Assert.Null(noThp.Eligible);

        HugePageReport otherOs = HugePageProbe.Query(0x200000, MiB, new FakeHugePageSource(false, "[always]", Smaps));
        Assert.Equal(TransparentHugePageMode.Unavailable, otherOs.Mode);
        Assert.Contains("This OS offers no", otherOs.Explanation, StringComparison.Ordinal);
        Assert.Equal(0, otherOs.HugePageBytes);
    }

    [Fact]
    public void Unreadable_smaps_reports_the_mode_and_an_unknown_backing()
    {
        HugePageReport report = HugePageProbe.Query(0x200000, MiB, new FakeHugePageSource(true, "[madvise]", null));
        Assert.Equal(TransparentHugePageMode.Madvise, report.Mode);
        Assert.True(report.IsAvailable);
        Assert.Contains("cannot be read", report.Explanation, StringComparison.Ordinal);
    }

    [Fact]
    public void A_range_not_entirely_mapped_is_refused()
    {
        var source = new FakeHugePageSource(true, "[madvise]", Smaps);
        Assert.Throws<ArgumentException>(() => HugePageProbe.Query(0x100000, 2 * MiB, source));
        Assert.Throws<ArgumentException>(() => HugePageProbe.Query(0x800000, 2 * MiB, source));
        Assert.Throws<ArgumentException>(() => HugePageProbe.Query(0x10000000, 4096, source));
    }
}
