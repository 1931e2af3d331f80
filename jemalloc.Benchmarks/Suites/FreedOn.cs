namespace jemalloc.Benchmarks.Suites;

/// <summary>Which thread frees the blocks in the multi-thread <c>alloc</c> suite.</summary>
public enum FreedOn
{
    /// <summary>Each thread frees its own blocks, after making all of them (the single-thread suite's pattern on every thread).</summary>
    AllocatingThread,

    /// <summary>
    /// The threads form a ring: each one allocates blocks in batches and hands them to the next,
    /// which reads and frees them while it makes its own (a producer-consumer pattern: every block
    /// is freed by another thread than the one that allocated it). Needs 2 threads or more.
    /// </summary>
    NextThread,
}
