namespace jemalloc;

/// <summary>
/// A snapshot of jemalloc's global memory statistics (<c>stats.*</c>), in bytes, from
/// <see cref="Jem.GetStatistics(bool)"/>.
/// </summary>
/// <param name="Allocated">Bytes allocated by the application (<c>stats.allocated</c>).</param>
/// <param name="Active">Bytes in pages holding allocations (<c>stats.active</c>); at least <paramref name="Allocated"/>.</param>
/// <param name="Metadata">Bytes of jemalloc's own bookkeeping (<c>stats.metadata</c>).</param>
/// <param name="Resident">Bytes in physically resident pages jemalloc maps (<c>stats.resident</c>).</param>
/// <param name="Mapped">Bytes in extents mapped for allocations (<c>stats.mapped</c>).</param>
/// <param name="Retained">Bytes of virtual memory kept mapped for reuse but not resident (<c>stats.retained</c>).</param>
public readonly record struct JemStatistics(
    ulong Allocated,
    ulong Active,
    ulong Metadata,
    ulong Resident,
    ulong Mapped,
    ulong Retained);
