namespace jemalloc.Tests.Support;

/// <summary>
/// Sets <see cref="AllocationLedger.CheckedMode"/> for one test and restores it on dispose, so a test
/// says which mode it needs whether or not the run set <c>JEMALLOC_NET_CHECKED</c>. Only for tests of
/// the <see cref="LeakChecked"/> collection, which runs alone: the mode is process-wide.
/// </summary>
internal readonly struct CheckedModeScope : IDisposable
{
    private readonly bool _was;

    private CheckedModeScope(bool mode)
    {
        _was = AllocationLedger.CheckedMode;
        AllocationLedger.CheckedMode = mode;
    }

    /// <summary>Checked mode on until dispose.</summary>
    internal static CheckedModeScope On() => new(true);

    /// <summary>Checked mode off until dispose (turning it off checks and frees the quarantine).</summary>
    internal static CheckedModeScope Off() => new(false);

    /// <summary>Restores the mode the test started in, after checking and freeing what the quarantine holds.</summary>
    public void Dispose()
    {
        AllocationLedger.FlushQuarantine();
        AllocationLedger.CheckedMode = _was;
    }
}
