namespace jemalloc;

// Placeholder until the memory-availability branch is merged.
internal static class SystemMemory
{
    internal static void ThrowIfCannotFit(nuint bytes) => _ = bytes;
}
