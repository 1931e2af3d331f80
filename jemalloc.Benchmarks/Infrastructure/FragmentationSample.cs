namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The heap after one round of the <c>malloc --fragment</c> pattern, each figure in bytes relative to
/// the moment just before the pattern started (so it can be negative).
/// </summary>
/// <param name="Live">Bytes the pattern holds alive (the same on both heaps).</param>
/// <param name="Heap">
/// The heap's size: managed, <see cref="GCMemoryInfo.HeapSizeBytes"/> as of the most recent
/// collection; jemalloc, <c>stats.active</c> (pages holding allocations).
/// </param>
/// <param name="Fragmented">
/// Space inside the heap that holds nothing: managed, <see cref="GCMemoryInfo.FragmentedBytes"/> as
/// of the most recent collection; jemalloc, <c>stats.active</c> minus <c>stats.allocated</c>.
/// </param>
/// <param name="Mapped">
/// Memory the heap holds from the system: managed, <see cref="GCMemoryInfo.TotalCommittedBytes"/>;
/// jemalloc, <c>stats.mapped</c> (active pages, and freed pages not yet given back).
/// </param>
/// <param name="Resident">The process's resident memory (<c>VmRSS</c>).</param>
public readonly record struct FragmentationSample(long Live, long Heap, long Fragmented, long Mapped, long Resident);
