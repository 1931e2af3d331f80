using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;

namespace jemalloc.Cli.Tests.Benchmarks;

[Collection(JembenchRuns.Name)]
public class ResultChecksTests
{
    [Fact]
    public void A_wrong_result_throws_and_is_recorded_as_failed()
    {
        ResultChecks.Clear();
        var e = Assert.Throws<BenchmarkVerificationException>(() => ResultChecks.Equal("demo", 42L, 41L, "the answer"));
        Assert.Contains("expected 42, got 41", e.Message, StringComparison.Ordinal);
        ResultCheck check = Assert.Single(ResultChecks.All);
        Assert.False(check.Passed);
        ResultChecks.Clear();
    }

    [Fact]
    public void A_right_result_is_recorded_as_passed()
    {
        ResultChecks.Clear();
        ResultChecks.Equal("demo", 42L, 42L, "the answer");
        Assert.True(Assert.Single(ResultChecks.All).Passed);
        ResultChecks.Clear();
    }

    [Fact]
    public void Fill_values_have_the_pattern_in_every_byte()
    {
        Assert.Equal(0x5A5A5A5A5A5A5A5AUL, FillValue.Of<ulong>());
        Assert.Equal((byte)0x5A, FillValue.Of<byte>());
        Assert.Equal(BitConverter.Int32BitsToSingle(0x5A5A5A5A), FillValue.Of<float>());
    }

    [Fact]
    public void Suite_sizes_refuse_empty_and_non_positive_lists()
    {
        Assert.Throws<ArgumentException>(() => SuiteParameters.Sizes = []);
        Assert.Throws<ArgumentException>(() => SuiteParameters.Sizes = [10, 0]);
    }
}
