using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using jemalloc.Configuration;

namespace jemalloc;

/// <summary>
/// Every process-wide setting of the library in one place. Each property is the same setting as the
/// one named in its documentation (one store, two names): setting either changes both.
/// <see cref="Describe"/> lists them all with their values, as <c>jembench info</c> prints them.
/// </summary>
/// <remarks>
/// jemalloc's own options are chosen once, before it loads (<see cref="NativeConfiguration"/>,
/// <see cref="TuningPresets"/>); its runtime knobs for all arenas and threads are
/// <see cref="JemTuning"/>'s; per-thread ones (<see cref="JemTuning.ThreadArena"/>,
/// <see cref="JemTuning.ThreadCacheEnabled"/>) are not process-wide and are not here.
/// </remarks>
public static class JemSettings
{
    /// <summary>
    /// The <c>malloc_conf</c> options jemalloc loads with (<see cref="Jem.Init(string)"/>, else the
    /// environment variable <see cref="Jem.ConfigurationVariable"/>): read as <see cref="Jem.RequestedConfiguration"/>;
    /// setting it is <see cref="Jem.Init(string)"/>.
    /// </summary>
    /// <exception cref="ArgumentNullException">The value set is null.</exception>
    /// <exception cref="ArgumentException">The value set is not a list of <c>key:value</c> pairs, or sets <c>abort</c>/<c>abort_conf</c>.</exception>
    /// <exception cref="InvalidOperationException">Set after the library loaded.</exception>
    [DisallowNull]
    public static string? NativeConfiguration
    {
        get => Jem.RequestedConfiguration;
        set => Jem.Init(value);
    }

    /// <summary>The size from which arrays, writer blocks and pool blocks created without options ask for huge pages: <see cref="HugePagePolicy.ThresholdBytes"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value set is negative.</exception>
    public static long HugePageThresholdBytes
    {
        get => HugePagePolicy.ThresholdBytes;
        set => HugePagePolicy.ThresholdBytes = value;
    }

    /// <summary>How arrays, writer blocks and pool blocks created without options decide on huge pages (measured, always or never): <see cref="HugePagePolicy.Selection"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value set is not one of <see cref="jemalloc.HugePageSelection"/>'s.</exception>
    public static HugePageSelection HugePageSelection
    {
        get => HugePagePolicy.Selection;
        set => HugePagePolicy.Selection = value;
    }

    /// <summary>The size of a write from which fills and copies stream past the cache: <see cref="FillPolicy.NonTemporalThresholdBytes"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value set is negative and not <see cref="FillPolicy.Automatic"/>.</exception>
    public static long NonTemporalThresholdBytes
    {
        get => FillPolicy.NonTemporalThresholdBytes;
        set => FillPolicy.NonTemporalThresholdBytes = value;
    }

    /// <summary>Whether freed memory is poisoned and held in quarantine to catch use after free: <see cref="AllocationLedger.CheckedMode"/>.</summary>
    public static bool CheckedMode
    {
        get => AllocationLedger.CheckedMode;
        set => AllocationLedger.CheckedMode = value;
    }

    /// <summary>How many bytes of freed memory checked mode holds back: <see cref="AllocationLedger.QuarantineBytes"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value set is negative.</exception>
    public static long QuarantineBytes
    {
        get => AllocationLedger.QuarantineBytes;
        set => AllocationLedger.QuarantineBytes = value;
    }

    /// <summary>Whether each allocation records the stack that made it, shown by <see cref="AllocationLedger.Snapshot"/>: <see cref="AllocationLedger.CaptureStackTraces"/>.</summary>
    public static bool CaptureStackTraces
    {
        get => AllocationLedger.CaptureStackTraces;
        set => AllocationLedger.CaptureStackTraces = value;
    }

    /// <summary>
    /// One line per setting: its name here, its value, and where else it is read or set. A setting
    /// whose environment variable was set to a value not understood says so after its value:
    /// <c>CheckedMode = off (JEMALLOC_NET_CHECKED=yes not understood: off) (...)</c>, the default the
    /// process started with instead (the note stays for the whole process, whatever the setting is
    /// changed to later). Reads no jemalloc value, so it does not load the native library.
    /// </summary>
    public static string Describe()
    {
        var text = new StringBuilder();
        Line(text, nameof(NativeConfiguration), NativeConfiguration ?? "(none)", $"Jem.Init, {Jem.ConfigurationVariable}");
        Line(text, nameof(HugePageThresholdBytes), Bytes(HugePageThresholdBytes, "never"), "HugePagePolicy.ThresholdBytes");
        Line(text, nameof(HugePageSelection), HugePageSelection.ToString().ToLowerInvariant() + HugePagePolicy.SelectionVariable.Note, $"HugePagePolicy.Selection, {HugePageVariables.Selection}");
        Line(text, nameof(NonTemporalThresholdBytes), NonTemporalThresholdBytes == FillPolicy.Automatic ? "automatic" : Bytes(NonTemporalThresholdBytes, "never"), "FillPolicy.NonTemporalThresholdBytes");
        Line(text, nameof(CheckedMode), (CheckedMode ? "on" : "off") + CheckedModeVariables.EnabledAtStartup.Note, $"AllocationLedger.CheckedMode, {CheckedModeVariables.Enabled}");
        Line(text, nameof(QuarantineBytes), Bytes(QuarantineBytes, "no limit") + CheckedModeVariables.QuarantineBytesAtStartup.Note, $"AllocationLedger.QuarantineBytes, {CheckedModeVariables.QuarantineBytes}");
        Line(text, nameof(CaptureStackTraces), CaptureStackTraces ? "on" : "off", "AllocationLedger.CaptureStackTraces");
        return text.ToString();
    }

    // long.MaxValue is what a threshold that is never reached and a limit that never applies are set to:
    // each says which in its own words.
    private static string Bytes(long bytes, string whenMaxValue) =>
        bytes == long.MaxValue ? whenMaxValue : bytes.ToString("N0", CultureInfo.InvariantCulture) + " bytes";

    private static void Line(StringBuilder text, string name, string value, string alsoAt) =>
        text.Append(CultureInfo.InvariantCulture, $"{name} = {value} ({alsoAt})").Append('\n');
}
