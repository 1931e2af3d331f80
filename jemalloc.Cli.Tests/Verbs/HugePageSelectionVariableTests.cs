using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// <c>JEMALLOC_NET_HUGE_PAGES</c> sets the huge-page selection at startup, as a user sets it for a
/// process: in a real jembench process, whose <c>info</c> shows the selection and the policy.
/// </summary>
public sealed class HugePageSelectionVariableTests
{
    private const string Variable = "JEMALLOC_NET_HUGE_PAGES";
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(3);

    [Theory]
    [InlineData("never", "never", "huge-page policy: never huge pages by default")]
    [InlineData("Always", "always", "huge-page policy: always huge pages from 2 MiB, not measured")]
    [InlineData("measured", "measured", "huge-page policy: measured, from 2 MiB: ")]
    [InlineData(null, "measured", "huge-page policy: measured, from 2 MiB: ")]
    [InlineData("", "measured", "huge-page policy: measured, from 2 MiB: ")] // empty is unset
    [InlineData("  ", "measured", "huge-page policy: measured, from 2 MiB: ")]
    public void The_variable_sets_the_selection_the_process_starts_with(string? value, string selection, string policy)
    {
        ChildProcessRunner.Result result = JembenchProcess.Run(new Dictionary<string, string?> { [Variable] = value }, Timeout, "info");

        Assert.True(result.ExitCode == Program.ExitSuccess, result.ToString());
        Assert.Contains($"HugePageSelection = {selection} (HugePagePolicy.Selection, {Variable})", result.Output, StringComparison.Ordinal);
        Assert.Contains(policy, result.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("not understood", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_value_not_understood_leaves_the_default_and_says_it_was_ignored()
    {
        ChildProcessRunner.Result result = JembenchProcess.Run(new Dictionary<string, string?> { [Variable] = "sometimes" }, Timeout, "info");

        Assert.True(result.ExitCode == Program.ExitSuccess, result.ToString());
        Assert.Contains($"HugePageSelection = measured ({Variable}=sometimes not understood: measured) (HugePagePolicy.Selection, {Variable})", result.Output, StringComparison.Ordinal);
        Assert.Contains($"huge-page policy: measured ({Variable}=sometimes not understood: measured), from 2 MiB: ", result.Output, StringComparison.Ordinal);
    }
}
