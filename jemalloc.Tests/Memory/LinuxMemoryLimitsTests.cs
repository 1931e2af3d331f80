using jemalloc.Memory;

namespace jemalloc.Tests.Memory;

/// <summary>The availability formula, from made-up <c>/proc</c> and cgroup files.</summary>
public sealed class LinuxMemoryLimitsTests
{
    private const ulong GiB = 1UL << 30;
    private const ulong None = ulong.MaxValue;

    private static string Meminfo(ulong availableKb, ulong swapFreeKb) =>
        $"MemTotal:       24683620 kB\nMemFree:        22806080 kB\nMemAvailable:   {availableKb} kB\nBuffers:          202940 kB\nSwapTotal:       {swapFreeKb} kB\nSwapFree:        {swapFreeKb} kB\n";

    private static Func<string, string?> Files(Dictionary<string, string> files) => path => files.GetValueOrDefault(path);

    [Fact]
    public void Without_cgroup_or_limits_it_is_MemAvailable_plus_SwapFree()
    {
        var read = Files(new() { ["/proc/meminfo"] = Meminfo(8 * 1024 * 1024, 2 * 1024 * 1024) });

        MemoryAvailability availability = LinuxMemoryLimits.Compute(read, LinuxMemoryLimits.CgroupLocation.None, None, None)!.Value;

        Assert.Equal(10 * GiB, availability.Bytes);
        Assert.Equal(10 * GiB, availability.MemoryBytes);
        Assert.Equal("MemAvailable + SwapFree 10.0 GiB; cgroup limit none", availability.Explanation);
    }

    [Fact]
    public void Unreadable_or_old_meminfo_means_unknown_not_zero()
    {
        Assert.Null(LinuxMemoryLimits.Compute(_ => null, LinuxMemoryLimits.CgroupLocation.None, None, None));
        Assert.Null(LinuxMemoryLimits.Compute(Files(new() { ["/proc/meminfo"] = "MemTotal: 100 kB\nMemFree: 50 kB\n" }), LinuxMemoryLimits.CgroupLocation.None, None, None));
    }

    [Fact]
    public void A_cgroup_v2_limit_caps_memory_and_its_swap_limit_caps_swap_with_file_cache_counted_reclaimable()
    {
        string cgroup = "0::/user.slice/app.scope\n";
        string mountinfo = "24 1 0:21 / /proc rw - proc proc rw\n30 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        LinuxMemoryLimits.CgroupLocation location = LinuxMemoryLimits.FindCgroup(cgroup, mountinfo);
        Assert.Equal(2, location.Version);
        Assert.Equal(["/sys/fs/cgroup/user.slice/app.scope", "/sys/fs/cgroup/user.slice", "/sys/fs/cgroup"], location.Directories);

        var read = Files(new()
        {
            ["/proc/meminfo"] = Meminfo(20 * 1024 * 1024, 8 * 1024 * 1024),
            // 4 GiB limit, 3 GiB used of which 1 GiB is file cache: 2 GiB of room.
            ["/sys/fs/cgroup/user.slice/app.scope/memory.max"] = $"{4 * GiB}\n",
            ["/sys/fs/cgroup/user.slice/app.scope/memory.current"] = $"{3 * GiB}\n",
            ["/sys/fs/cgroup/user.slice/app.scope/memory.stat"] = $"anon {2 * GiB}\nfile {GiB}\ninactive_file {GiB / 2}\nactive_file {GiB / 2}\n",
            ["/sys/fs/cgroup/user.slice/app.scope/memory.swap.max"] = $"{GiB}\n",
            ["/sys/fs/cgroup/user.slice/app.scope/memory.swap.current"] = "0\n",
            ["/sys/fs/cgroup/user.slice/memory.max"] = "max\n",
            ["/sys/fs/cgroup/user.slice/memory.swap.max"] = "max\n",
        });

        MemoryAvailability availability = LinuxMemoryLimits.Compute(read, location, None, None)!.Value;

        Assert.Equal(3 * GiB, availability.Bytes);
        Assert.Equal("MemAvailable + SwapFree 28.0 GiB; cgroup v2 limit 4.0 GiB, 2.0 GiB free", availability.Explanation);
    }

    [Fact]
    public void A_parent_cgroup_with_less_room_wins()
    {
        LinuxMemoryLimits.CgroupLocation location = LinuxMemoryLimits.FindCgroup("0::/a/b\n", "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        var read = Files(new()
        {
            ["/proc/meminfo"] = Meminfo(20 * 1024 * 1024, 0),
            ["/sys/fs/cgroup/a/b/memory.max"] = $"{8 * GiB}",
            ["/sys/fs/cgroup/a/b/memory.current"] = $"{GiB}",
            ["/sys/fs/cgroup/a/memory.max"] = $"{6 * GiB}",
            ["/sys/fs/cgroup/a/memory.current"] = $"{5 * GiB}",
        });

        Assert.Equal(GiB, LinuxMemoryLimits.Compute(read, location, None, None)!.Value.Bytes);
    }

    [Fact]
    public void A_cgroup_v1_memory_limit_and_memsw_limit_apply_and_its_unlimited_value_is_no_limit()
    {
        string cgroup = "9:name=systemd:/\n4:memory:/docker/abc\n0::/\n";
        string mountinfo = "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n34 30 0:31 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
        LinuxMemoryLimits.CgroupLocation location = LinuxMemoryLimits.FindCgroup(cgroup, mountinfo);
        Assert.Equal(1, location.Version);
        Assert.Equal(["/sys/fs/cgroup/memory"], location.Directories);

        var files = new Dictionary<string, string>
        {
            ["/proc/meminfo"] = Meminfo(20 * 1024 * 1024, 4 * 1024 * 1024),
            ["/sys/fs/cgroup/memory/memory.limit_in_bytes"] = $"{2 * GiB}\n",
            ["/sys/fs/cgroup/memory/memory.usage_in_bytes"] = $"{GiB}\n",
            ["/sys/fs/cgroup/memory/memory.stat"] = $"cache 0\ntotal_inactive_file {GiB / 4}\ntotal_active_file {GiB / 4}\n",
        };
        // 2 GiB limit, 1 GiB used, half of it file cache: 1.5 GiB of memory, plus all 4 GiB of swap.
        Assert.Equal(GiB * 11 / 2, LinuxMemoryLimits.Compute(Files(files), location, None, None)!.Value.Bytes);

        // memory+swap limit 3 GiB, 1 GiB used (0.5 GiB file cache): 2.5 GiB in all.
        files["/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"] = $"{3 * GiB}\n";
        files["/sys/fs/cgroup/memory/memory.memsw.usage_in_bytes"] = $"{GiB}\n";
        Assert.Equal(GiB * 5 / 2, LinuxMemoryLimits.Compute(Files(files), location, None, None)!.Value.Bytes);

        files["/sys/fs/cgroup/memory/memory.limit_in_bytes"] = "9223372036854771712\n";
        files["/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"] = "9223372036854771712\n";
        MemoryAvailability unlimited = LinuxMemoryLimits.Compute(Files(files), location, None, None)!.Value;
        Assert.Equal(24 * GiB, unlimited.Bytes);
        Assert.EndsWith("cgroup limit none", unlimited.Explanation, StringComparison.Ordinal);
    }

    [Fact]
    public void An_unreadable_cgroup_usage_does_not_make_a_spurious_refusal()
    {
        LinuxMemoryLimits.CgroupLocation location = LinuxMemoryLimits.FindCgroup("0::/\n", "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        var read = Files(new()
        {
            ["/proc/meminfo"] = Meminfo(20 * 1024 * 1024, 0),
            ["/sys/fs/cgroup/memory.max"] = $"{4 * GiB}",
        });

        Assert.Equal(4 * GiB, LinuxMemoryLimits.Compute(read, location, None, None)!.Value.Bytes);
    }

    [Fact]
    public void Address_space_limits_cap_the_total_but_not_the_memory_bound()
    {
        var read = Files(new()
        {
            ["/proc/meminfo"] = Meminfo(20 * 1024 * 1024, 0),
            ["/proc/self/status"] = $"Name:\tdotnet\nVmPeak:\t 9000000 kB\nVmSize:\t {3 * 1024 * 1024} kB\nVmData:\t {1024 * 1024} kB\n",
        });

        MemoryAvailability addressSpace = LinuxMemoryLimits.Compute(read, LinuxMemoryLimits.CgroupLocation.None, 8 * GiB, None)!.Value;
        Assert.Equal(5 * GiB, addressSpace.Bytes);
        Assert.Equal(20 * GiB, addressSpace.MemoryBytes);
        Assert.Contains("RLIMIT_AS 8.0 GiB, 5.0 GiB unmapped", addressSpace.Explanation, StringComparison.Ordinal);

        MemoryAvailability data = LinuxMemoryLimits.Compute(read, LinuxMemoryLimits.CgroupLocation.None, None, 3 * GiB)!.Value;
        Assert.Equal(2 * GiB, data.Bytes);
        Assert.Contains("RLIMIT_DATA 3.0 GiB, 2.0 GiB unmapped", data.Explanation, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0::/\n", "", 0)]
    [InlineData(null, "x", 0)]
    [InlineData("0::/system.slice/my\\040app.service\n", "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", 2)]
    public void Cgroup_discovery_tolerates_missing_hierarchies(string? cgroup, string mountinfo, int version)
    {
        Assert.Equal(version, LinuxMemoryLimits.FindCgroup(cgroup, mountinfo).Version);
    }

    [Fact]
    public void Mount_points_with_escaped_spaces_are_unescaped()
    {
        LinuxMemoryLimits.CgroupLocation location = LinuxMemoryLimits.FindCgroup("0::/x\n", "30 22 0:27 / /mnt/cg\\040root rw - cgroup2 cgroup2 rw\n");
        Assert.Equal(["/mnt/cg root/x", "/mnt/cg root"], location.Directories);
    }
}
