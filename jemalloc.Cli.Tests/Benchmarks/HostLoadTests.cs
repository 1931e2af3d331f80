using jemalloc.Cli.Commands;

namespace jemalloc.Cli.Tests.Benchmarks;

public class HostLoadTests
{
    [Fact]
    public void A_load_above_the_core_count_is_reported_with_a_warning()
    {
        string[] lines = [.. HostLoad.Describe("records", [0.5, 3.25, 1.0], cores: 2)];
        Assert.Equal(2, lines.Length);
        Assert.Equal("records: load average (1 min) during the run: 0.50 to 3.25 over 3 samples, on 2 cores.", lines[0]);
        Assert.StartsWith("records: WARNING: the load average reached 3.25, above the 2 cores", lines[1], StringComparison.Ordinal);
    }

    [Fact]
    public void A_load_within_the_core_count_has_no_warning_and_no_samples_say_so()
    {
        Assert.Equal(["records: load average (1 min) during the run: 1.00 to 2.00 over 2 samples, on 2 cores."], HostLoad.Describe("records", [1.0, 2.0], cores: 2));
        Assert.Equal(["records: load average: not available on this platform (4 cores)."], HostLoad.Describe("records", [], cores: 4));
    }
}
