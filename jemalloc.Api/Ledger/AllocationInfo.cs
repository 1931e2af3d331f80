namespace jemalloc;

/// <summary>A live allocation as seen by <see cref="AllocationLedger.Snapshot"/>: what a user needs to find a leak.</summary>
/// <param name="Address">The native address; the allocation's identity while it is live.</param>
/// <param name="Size">The requested size in bytes.</param>
/// <param name="Kind">The type of structure that owns it.</param>
/// <param name="ElementType">The element type of that structure, when it has one.</param>
/// <param name="Arena">The jemalloc arena it was allocated in, or <see langword="null"/> for the default arenas.</param>
/// <param name="AcquireCount">How many <c>Acquire()</c> calls are not yet matched by a <c>Release()</c>.</param>
/// <param name="AllocatedAt">The stack trace of the allocation when <see cref="AllocationLedger.CaptureStackTraces"/> was on, otherwise <see langword="null"/>.</param>
public readonly record struct AllocationInfo(
    nint Address,
    nuint Size,
    AllocationKind Kind,
    Type? ElementType,
    uint? Arena,
    int AcquireCount,
    string? AllocatedAt);
