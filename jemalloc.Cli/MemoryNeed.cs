namespace jemalloc.Cli;

/// <summary>The memory one benchmark run needs.</summary>
/// <param name="NativeBytes">The largest native structure a benchmark holds.</param>
/// <param name="ManagedBytes">The largest managed array a benchmark holds.</param>
/// <param name="Description">What needs it, for the message, e.g. "HugeArray&lt;UInt64&gt;[4,096,000,000]".</param>
public sealed record MemoryNeed(long NativeBytes, long ManagedBytes, string Description);
