namespace jemalloc.Tests.Support;

/// <summary>
/// Sets <see cref="HugePagePolicy.Selection"/> for one test and restores it on dispose, so a test that
/// depends on whether arrays made without options ask for huge pages says so instead of relying on
/// what this host's measurement chose. Only for tests of the <c>GlobalSettings</c> collection, which
/// runs alone: the selection is process-wide.
/// </summary>
internal readonly struct HugePageSelectionScope : IDisposable
{
    private readonly HugePageSelection _was;

    private HugePageSelectionScope(HugePageSelection selection)
    {
        _was = HugePagePolicy.Selection;
        HugePagePolicy.Selection = selection;
    }

    /// <summary>The selection is <paramref name="selection"/> until dispose.</summary>
    internal static HugePageSelectionScope Set(HugePageSelection selection) => new(selection);

    /// <summary>Restores the selection the test started with.</summary>
    public void Dispose() => HugePagePolicy.Selection = _was;
}
