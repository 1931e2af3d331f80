using System.Runtime.InteropServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// jemalloc's exports called directly, for the baselines that stand for "the raw calls a structure
/// makes". The library's <see cref="Jem.Sdallocx(void*, nuint, MallocxFlags)"/> checks the size it is
/// given against the block (two size queries) before it frees, which a structure's own free does not
/// do: a baseline through it would do more native work than the row it is compared with. Called
/// through function pointers with the normal GC transition, as the library calls jemalloc.
/// </summary>
public static unsafe class JemExports
{
    /// <summary>The handle of the jemalloc library the structures use (loaded by <see cref="Jem.Load"/>).</summary>
    public static nint Library { get; } = NativeLibrary.Load(Jem.Load(), typeof(Jem).Assembly, null);

    /// <summary><c>je_sdallocx</c>, unchecked: the size must be the block's size class, as for C callers.</summary>
    public static delegate* unmanaged<void*, nuint, int, void> Sdallocx { get; } =
        (delegate* unmanaged<void*, nuint, int, void>)NativeLibrary.GetExport(Library, "je_sdallocx");
}
