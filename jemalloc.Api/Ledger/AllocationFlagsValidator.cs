namespace jemalloc;

// Placeholder until the mallctl branch is merged.
internal static class AllocationFlagsValidator
{
    internal static void Validate(MallocxFlags flags, string paramName) => _ = (flags, paramName);
}
