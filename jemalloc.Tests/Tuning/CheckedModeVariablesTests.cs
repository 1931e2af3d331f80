using jemalloc.Configuration;

namespace jemalloc.Tests.Tuning;

/// <summary>
/// What <c>JEMALLOC_NET_CHECKED</c> and <c>JEMALLOC_NET_QUARANTINE_BYTES</c> accept, as pure functions
/// (the variables themselves are read once per process: jemalloc.Cli.Tests' CheckedModeVariableTests
/// set them for a real process).
/// </summary>
public sealed class CheckedModeVariablesTests
{
    [Theory]
    [InlineData("1", true)]
    [InlineData("true", true)]
    [InlineData("True", true)]
    [InlineData("TRUE", true)]
    [InlineData("tRuE", true)]
    [InlineData(" 1 ", true)]
    [InlineData("\ttrue\n", true)]
    [InlineData("0", false)]
    [InlineData("false", false)]
    [InlineData("FALSE", false)]
    [InlineData("  False  ", false)]
    public void The_checked_variable_accepts_1_0_true_and_false_in_any_case_with_blanks_around(string text, bool expected) =>
        Assert.Equal(expected, CheckedModeVariables.ParseEnabled(text));

    [Theory]
    [InlineData("on")]
    [InlineData("off")]
    [InlineData("yes")]
    [InlineData("no")]
    [InlineData("2")]
    [InlineData("-1")]
    [InlineData("01")]
    [InlineData("1.0")]
    [InlineData("t")]
    [InlineData("true1")]
    [InlineData("tr ue")]
    [InlineData("")]
    [InlineData("   ")]
    [InlineData(null)]
    public void The_checked_variable_refuses_anything_else(string? text) =>
        Assert.Null(CheckedModeVariables.ParseEnabled(text));

    [Theory]
    [InlineData("0", 0L)]
    [InlineData("1", 1L)]
    [InlineData("1048576", 1_048_576L)]
    [InlineData(" 42 ", 42L)]
    [InlineData("\t268435456\r\n", 268_435_456L)]
    [InlineData("007", 7L)]
    [InlineData("9223372036854775807", long.MaxValue)]
    public void The_quarantine_variable_accepts_decimal_digits_with_blanks_around(string text, long expected) =>
        Assert.Equal(expected, CheckedModeVariables.ParseQuarantineBytes(text));

    [Theory]
    [InlineData("abc")]
    [InlineData("-1")]
    [InlineData("-0")]
    [InlineData("+5")]
    [InlineData("1_000")]
    [InlineData("1,000")]
    [InlineData("1 000")]
    [InlineData("1.5")]
    [InlineData("1e6")]
    [InlineData("0x10")]
    [InlineData("64M")]
    [InlineData("64 MiB")]
    [InlineData("\u0663")] // ARABIC-INDIC DIGIT THREE: decimal digits are ASCII only.
    [InlineData("9223372036854775808")] // long.MaxValue + 1
    [InlineData("99999999999999999999999")]
    [InlineData("")]
    [InlineData("  ")]
    [InlineData(null)]
    public void The_quarantine_variable_refuses_signs_separators_units_and_overflow(string? text) =>
        Assert.Null(CheckedModeVariables.ParseQuarantineBytes(text));

    [Fact]
    public void Values_not_understood_keep_the_defaults_and_are_noted()
    {
        StartupVariable<bool> enabled = StartupVariable<bool>.From(CheckedModeVariables.Enabled, "on", CheckedModeVariables.ParseEnabled, false, "off");
        Assert.False(enabled.Value);
        Assert.Equal(" (JEMALLOC_NET_CHECKED=on not understood: off)", enabled.Note);

        StartupVariable<long> limit = StartupVariable<long>.From(
            CheckedModeVariables.QuarantineBytes, "-1", CheckedModeVariables.ParseQuarantineBytes, CheckedModeVariables.DefaultQuarantineBytes, "256 MiB");
        Assert.Equal(256L << 20, limit.Value);
        Assert.Equal(" (JEMALLOC_NET_QUARANTINE_BYTES=-1 not understood: 256 MiB)", limit.Note);
    }

    [Fact]
    public void This_process_read_the_variables_into_the_settings()
    {
        // Whatever this run set (the suite runs with and without JEMALLOC_NET_CHECKED=1), the reading is what
        // the quarantine started from and what the settings' lines note.
        StartupVariable<bool> enabled = CheckedModeVariables.EnabledAtStartup;
        StartupVariable<long> limit = CheckedModeVariables.QuarantineBytesAtStartup;
        Assert.Equal(CheckedModeVariables.Enabled, enabled.Name);
        Assert.Equal(CheckedModeVariables.QuarantineBytes, limit.Name);
        // The values are this process's variables as the parsers read them (nothing in the suite changes them).
        Assert.Equal(CheckedModeVariables.ParseEnabled(Environment.GetEnvironmentVariable(CheckedModeVariables.Enabled)) ?? false, enabled.Value);
        Assert.Equal(
            CheckedModeVariables.ParseQuarantineBytes(Environment.GetEnvironmentVariable(CheckedModeVariables.QuarantineBytes)) ?? CheckedModeVariables.DefaultQuarantineBytes,
            limit.Value);
        string[] lines = JemSettings.Describe().Split('\n');
        Assert.Single(lines, l => l.StartsWith("CheckedMode = ", StringComparison.Ordinal) && l.EndsWith(enabled.Note + " (AllocationLedger.CheckedMode, JEMALLOC_NET_CHECKED)", StringComparison.Ordinal));
        Assert.Single(lines, l => l.StartsWith("QuarantineBytes = ", StringComparison.Ordinal)
            && l.EndsWith(limit.Note + " (AllocationLedger.QuarantineBytes, JEMALLOC_NET_QUARANTINE_BYTES)", StringComparison.Ordinal));
    }
}
