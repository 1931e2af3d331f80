namespace jemalloc.Simd;

/// <summary>
/// <see cref="FillPolicy"/>'s answer for one fill of a whole structure: the kernel, and the size
/// band whose automatic choice applies (which the fill measures for while it is
/// <see cref="FillKernel.Undecided"/>).
/// </summary>
/// <param name="Kernel">The stores to write with, or <see cref="FillKernel.Undecided"/>.</param>
/// <param name="Band">The automatic choice's size band (see <see cref="FillPolicy.BandOf"/>); -1 when none applies.</param>
internal readonly record struct FillPlan(FillKernel Kernel, int Band)
{
    /// <summary>The same plan for a write that must not measure: undecided reads as ordinary.</summary>
    internal FillPlan WithoutMeasuring() => Kernel == FillKernel.Undecided ? new(FillKernel.Ordinary, Band) : this;
}
