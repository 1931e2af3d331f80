namespace jemalloc.Configuration;

/// <summary>
/// The environment variables that set checked mode at startup: read by the ledger's quarantine and
/// named by <see cref="JemSettings.Describe"/>, which are in later layers.
/// </summary>
internal static class CheckedModeVariables
{
    /// <summary>Turns checked mode on when <c>1</c> or <c>true</c> (<see cref="AllocationLedger.CheckedMode"/>).</summary>
    internal const string Enabled = "JEMALLOC_NET_CHECKED";

    /// <summary>How many bytes of freed memory checked mode holds back (<see cref="AllocationLedger.QuarantineBytes"/>).</summary>
    internal const string QuarantineBytes = "JEMALLOC_NET_QUARANTINE_BYTES";
}
