using System.Globalization;

namespace jemalloc.Configuration;

/// <summary>
/// The environment variables that set checked mode at startup, read here once: used by the ledger's
/// quarantine and named by <see cref="JemSettings.Describe"/>, which are in later layers.
/// </summary>
internal static class CheckedModeVariables
{
    /// <summary>Turns checked mode on when <c>1</c> or <c>true</c>, off when <c>0</c> or <c>false</c> (any case, blanks around): <see cref="AllocationLedger.CheckedMode"/>.</summary>
    internal const string Enabled = "JEMALLOC_NET_CHECKED";

    /// <summary>How many bytes of freed memory checked mode holds back, in decimal digits (blanks around): <see cref="AllocationLedger.QuarantineBytes"/>.</summary>
    internal const string QuarantineBytes = "JEMALLOC_NET_QUARANTINE_BYTES";

    /// <summary>The quarantine's limit when <see cref="QuarantineBytes"/> is unset or not understood: 256 MiB.</summary>
    internal const long DefaultQuarantineBytes = 256L << 20;

    /// <summary>Checked mode as the process starts: <see cref="Enabled"/>, or off.</summary>
    internal static readonly StartupVariable<bool> EnabledAtStartup = StartupVariable<bool>.Read(Enabled, ParseEnabled, false, "off");

    /// <summary>The quarantine's limit as the process starts: <see cref="QuarantineBytes"/>, or <see cref="DefaultQuarantineBytes"/>.</summary>
    internal static readonly StartupVariable<long> QuarantineBytesAtStartup =
        StartupVariable<long>.Read(QuarantineBytes, ParseQuarantineBytes, DefaultQuarantineBytes, "256 MiB");

    /// <summary><c>1</c> or <c>true</c> is on, <c>0</c> or <c>false</c> off, in any case with blanks around; anything else is null.</summary>
    internal static bool? ParseEnabled(string? text) => text?.Trim().ToLowerInvariant() switch
    {
        "1" or "true" => true,
        "0" or "false" => false,
        _ => null,
    };

    /// <summary>
    /// A count of bytes written in decimal digits (0 to <see cref="long.MaxValue"/>), blanks around allowed;
    /// null for anything else: a sign, separators, a unit, a fraction, a number too large for a <see langword="long"/>.
    /// </summary>
    internal static long? ParseQuarantineBytes(string? text) =>
        long.TryParse(text?.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out long bytes) ? bytes : null;
}
