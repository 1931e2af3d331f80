using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// <c>JEMALLOC_NET_CHECKED</c> and <c>JEMALLOC_NET_QUARANTINE_BYTES</c> set checked mode at startup, as a user
/// sets them for a process: in a real jembench process, whose <c>info</c> lists the settings. A value not
/// understood keeps the default, and the setting's line says so.
/// </summary>
public sealed class CheckedModeVariableTests
{
    private const string Checked = "JEMALLOC_NET_CHECKED";
    private const string Quarantine = "JEMALLOC_NET_QUARANTINE_BYTES";
    private const string CheckedAlso = $"(AllocationLedger.CheckedMode, {Checked})";
    private const string QuarantineAlso = $"(AllocationLedger.QuarantineBytes, {Quarantine})";
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(3);

    [Theory]
    [InlineData("1", "1048576", "on", "1,048,576 bytes")]
    [InlineData(" TRUE ", "0", "on", "0 bytes")]
    [InlineData("false", " 4096 ", "off", "4,096 bytes")]
    [InlineData("0", null, "off", "268,435,456 bytes")]
    [InlineData("", "", "off", "268,435,456 bytes")]
    [InlineData(null, null, "off", "268,435,456 bytes")]
    public void Values_understood_set_checked_mode_without_a_note(string? checkedValue, string? quarantineValue, string mode, string limit)
    {
        string output = Info(checkedValue, quarantineValue);

        Assert.Contains($"CheckedMode = {mode} {CheckedAlso}\n", output, StringComparison.Ordinal);
        Assert.Contains($"QuarantineBytes = {limit} {QuarantineAlso}\n", output, StringComparison.Ordinal);
        Assert.DoesNotContain("not understood", output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("on", "abc")]
    [InlineData("yes", "-1")]
    [InlineData("2", "9223372036854775808")]
    [InlineData("enabled", "64M")]
    public void Values_not_understood_keep_the_defaults_and_say_they_were_ignored(string checkedValue, string quarantineValue)
    {
        string output = Info(checkedValue, quarantineValue);

        Assert.Contains($"CheckedMode = off ({Checked}={checkedValue} not understood: off) {CheckedAlso}\n", output, StringComparison.Ordinal);
        Assert.Contains($"QuarantineBytes = 268,435,456 bytes ({Quarantine}={quarantineValue} not understood: 256 MiB) {QuarantineAlso}\n", output, StringComparison.Ordinal);
    }

    [Fact]
    public void One_variable_not_understood_leaves_the_other_as_set()
    {
        string output = Info("true", "1,000");

        Assert.Contains($"CheckedMode = on {CheckedAlso}\n", output, StringComparison.Ordinal);
        Assert.Contains($"QuarantineBytes = 268,435,456 bytes ({Quarantine}=1,000 not understood: 256 MiB) {QuarantineAlso}\n", output, StringComparison.Ordinal);
    }

    private static string Info(string? checkedValue, string? quarantineValue)
    {
        ChildProcessRunner.Result result = JembenchProcess.Run(
            new Dictionary<string, string?> { [Checked] = checkedValue, [Quarantine] = quarantineValue, ["JEMALLOC_NET_HUGE_PAGES"] = null }, Timeout, "info");
        Assert.True(result.ExitCode == Program.ExitSuccess, result.ToString());
        return result.Output.ReplaceLineEndings("\n");
    }
}
