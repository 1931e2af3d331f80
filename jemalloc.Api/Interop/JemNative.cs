using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>
/// The raw exports of the native jemalloc library (built with the <c>je_</c> prefix).
/// This is the only place that declares them; everything public goes through <see cref="Jem"/>.
/// </summary>
/// <remarks>
/// <para>
/// GC transition (measured with <c>jemalloc.Benchmarks.Interop.GcTransitionBenchmarks</c>; figures in the
/// docs/results/gc-transition.md): <see cref="SuppressGCTransitionAttribute"/> saves a few nanoseconds per call, but a call
/// without transition must never block, take a lock or call back into .NET, or a garbage collection
/// waits for it (or deadlocks). <c>malloc</c>, <c>free</c> and the other allocation functions can take
/// an arena mutex, map memory or purge pages, so they keep the normal transition. Only the size
/// queries (<c>sallocx</c>, <c>nallocx</c>, <c>malloc_usable_size</c>) skip it, and only once the calling
/// thread's jemalloc state exists (see <see cref="SizeQueriesReady"/>): from then on they are lock-free
/// lookups.
/// </para>
/// <para>
/// The static constructor registers the resolver that finds the library; an explicit static
/// constructor guarantees it runs before the first call of any method here.
/// </para>
/// </remarks>
internal static unsafe partial class JemNative
{
    /// <summary>The logical library name resolved by <see cref="NativeLibraryLoader"/>.</summary>
    internal const string LibraryName = "jemallocnet";

    static JemNative() => NativeLibraryLoader.Register();

    [LibraryImport(LibraryName, EntryPoint = "je_malloc")]
    internal static partial void* Malloc(nuint size);

    [LibraryImport(LibraryName, EntryPoint = "je_calloc")]
    internal static partial void* Calloc(nuint count, nuint size);

    [LibraryImport(LibraryName, EntryPoint = "je_posix_memalign")]
    internal static partial int PosixMemalign(void** result, nuint alignment, nuint size);

    [LibraryImport(LibraryName, EntryPoint = "je_aligned_alloc")]
    internal static partial void* AlignedAlloc(nuint alignment, nuint size);

    [LibraryImport(LibraryName, EntryPoint = "je_realloc")]
    internal static partial void* Realloc(void* ptr, nuint size);

    [LibraryImport(LibraryName, EntryPoint = "je_free")]
    internal static partial void Free(void* ptr);

    [LibraryImport(LibraryName, EntryPoint = "je_mallocx")]
    internal static partial void* Mallocx(nuint size, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_rallocx")]
    internal static partial void* Rallocx(void* ptr, nuint size, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_xallocx")]
    internal static partial nuint Xallocx(void* ptr, nuint size, nuint extra, int flags);

    /// <summary><c>je_sallocx</c>: the real size of an allocation; see <see cref="SizeQueriesReady"/> for how the call is made.</summary>
    internal static nuint Sallocx(void* ptr, int flags)
    {
        if (t_sizeQueriesReady)
        {
            return SallocxSuppressed(ptr, flags);
        }

        nuint size = SallocxWithTransition(ptr, flags);
        t_sizeQueriesReady = true;
        return size;
    }

    [LibraryImport(LibraryName, EntryPoint = "je_sallocx")]
    private static partial nuint SallocxWithTransition(void* ptr, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_sallocx")]
    [SuppressGCTransition]
    private static partial nuint SallocxSuppressed(void* ptr, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_dallocx")]
    internal static partial void Dallocx(void* ptr, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_sdallocx")]
    internal static partial void Sdallocx(void* ptr, nuint size, int flags);

    /// <summary><c>je_nallocx</c>: the real size a request would get; see <see cref="SizeQueriesReady"/>.</summary>
    internal static nuint Nallocx(nuint size, int flags)
    {
        if (t_sizeQueriesReady)
        {
            return NallocxSuppressed(size, flags);
        }

        nuint result = NallocxWithTransition(size, flags);
        t_sizeQueriesReady = true;
        return result;
    }

    [LibraryImport(LibraryName, EntryPoint = "je_nallocx")]
    private static partial nuint NallocxWithTransition(nuint size, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_nallocx")]
    [SuppressGCTransition]
    private static partial nuint NallocxSuppressed(nuint size, int flags);

    /// <summary><c>je_malloc_usable_size</c>: the usable size of an allocation (0 for null); see <see cref="SizeQueriesReady"/>.</summary>
    internal static nuint MallocUsableSize(void* ptr)
    {
        if (t_sizeQueriesReady)
        {
            return MallocUsableSizeSuppressed(ptr);
        }

        nuint size = MallocUsableSizeWithTransition(ptr);
        t_sizeQueriesReady = true;
        return size;
    }

    [LibraryImport(LibraryName, EntryPoint = "je_malloc_usable_size")]
    private static partial nuint MallocUsableSizeWithTransition(void* ptr);

    [LibraryImport(LibraryName, EntryPoint = "je_malloc_usable_size")]
    [SuppressGCTransition]
    private static partial nuint MallocUsableSizeSuppressed(void* ptr);

    /// <summary>
    /// Whether the calling thread has made a size query through the normal transition, which
    /// initializes jemalloc's per-thread state. A thread's very first jemalloc call may take a
    /// mutex and allocate that state (its thread cache), which a call without GC transition must
    /// never do; every later size query is a lock-free lookup.
    /// </summary>
    internal static bool SizeQueriesReady => t_sizeQueriesReady;

    [ThreadStatic]
    private static bool t_sizeQueriesReady;

    [LibraryImport(LibraryName, EntryPoint = "je_mallctl")]
    internal static partial int Mallctl(byte* name, void* oldp, nuint* oldlenp, void* newp, nuint newlen);

    [LibraryImport(LibraryName, EntryPoint = "je_mallctlnametomib")]
    internal static partial int MallctlNameToMib(byte* name, nuint* mibp, nuint* miblenp);

    [LibraryImport(LibraryName, EntryPoint = "je_mallctlbymib")]
    internal static partial int MallctlByMib(nuint* mib, nuint miblen, void* oldp, nuint* oldlenp, void* newp, nuint newlen);

    [LibraryImport(LibraryName, EntryPoint = "je_malloc_stats_print")]
    internal static partial void MallocStatsPrint(delegate* unmanaged<void*, byte*, void> writeCallback, void* callbackState, byte* options);

    /// <summary>The exported data symbol <c>je_malloc_message</c>: a pointer to the function jemalloc prints with.</summary>
    internal const string MallocMessageSymbol = "je_malloc_message";
}
