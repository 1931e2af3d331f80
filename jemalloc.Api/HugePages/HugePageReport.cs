namespace jemalloc;

/// <summary>
/// Whether a range of memory is backed by transparent huge pages, as the kernel reports it; made by
/// <see cref="HugePageInfo.Query(nint, nuint)"/>.
/// </summary>
/// <param name="Mode">The kernel's transparent huge page mode.</param>
/// <param name="Address">The start of the range.</param>
/// <param name="Length">The length of the range in bytes.</param>
/// <param name="ResidentBytes">Bytes of the range in physical memory (<c>Rss</c> in <c>/proc/self/smaps</c>); 0 where unknown.</param>
/// <param name="HugePageBytes">Bytes of the range in transparent huge pages (<c>AnonHugePages</c>); 0 where unknown or none.</param>
/// <param name="Eligible">Whether the kernel considers the range's mappings eligible for huge pages (<c>THPeligible</c>); <see langword="null"/> where it does not say.</param>
/// <param name="Explanation">A sentence saying what the figures mean.</param>
/// <remarks>
/// The kernel counts per mapping, not per byte: where a mapping extends beyond the range, its
/// figures are attributed to the range only up to the size of the overlap.
/// </remarks>
public readonly record struct HugePageReport(
    TransparentHugePageMode Mode,
    nint Address,
    nuint Length,
    long ResidentBytes,
    long HugePageBytes,
    bool? Eligible,
    string Explanation)
{
    /// <summary>Whether the OS offers transparent huge pages to memory that asks for them.</summary>
    public bool IsAvailable => Mode is TransparentHugePageMode.Madvise or TransparentHugePageMode.Always;

    /// <summary>Whether any of the range is backed by huge pages.</summary>
    public bool HasHugePages => HugePageBytes > 0;

    /// <summary>The share of the range backed by huge pages, from 0 to 1.</summary>
    public double HugePageFraction => Length == 0 ? 0 : Math.Min(1.0, HugePageBytes / (double)Length);

    /// <inheritdoc/>
    public override string ToString() => Explanation;
}
