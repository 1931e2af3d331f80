using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace jemalloc.Interop;

/// <summary>
/// The raw exports of the native jemalloc library (built with the <c>je_</c> prefix).
/// This is the only place that declares them; everything public goes through <see cref="Jem"/>.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="SuppressGCTransitionAttribute"/> is used only on calls that never block, never take
/// a lock and never call back: the size queries. <c>malloc</c>/<c>free</c> and friends can take an
/// arena mutex, map memory or purge pages, so they keep the normal transition (see the README's
/// "GC transition" measurement).
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

    [LibraryImport(LibraryName, EntryPoint = "je_sallocx")]
    [SuppressGCTransition]
    internal static partial nuint Sallocx(void* ptr, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_dallocx")]
    internal static partial void Dallocx(void* ptr, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_sdallocx")]
    internal static partial void Sdallocx(void* ptr, nuint size, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_nallocx")]
    [SuppressGCTransition]
    internal static partial nuint Nallocx(nuint size, int flags);

    [LibraryImport(LibraryName, EntryPoint = "je_malloc_usable_size")]
    [SuppressGCTransition]
    internal static partial nuint MallocUsableSize(void* ptr);

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
