namespace jemalloc.Memory;

/// <summary>How much more memory the process can get, and how that was worked out (for messages).</summary>
/// <param name="Bytes">The bytes the process can still get: <paramref name="MemoryBytes"/> capped by address-space limits.</param>
/// <param name="MemoryBytes">
/// The bytes of memory (RAM and swap, or commit on Windows) the process can still get, without
/// <c>RLIMIT_AS</c>/<c>RLIMIT_DATA</c>. A block bigger than this is refused in advance: on Linux the
/// kernel would hand it out and kill the process later. A block that only an address-space limit
/// stops is left to jemalloc, which gets a clean refusal from the kernel (and may reuse address
/// space it already holds).
/// </param>
/// <param name="Explanation">The sources and limits, e.g. "MemAvailable + SwapFree 22.1 GiB; cgroup limit none".</param>
internal readonly record struct MemoryAvailability(ulong Bytes, ulong MemoryBytes, string Explanation);
