using System.Runtime.InteropServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Microsoft's mimalloc 2.0, loaded from the system (Debian's <c>libmimalloc2.0</c>, which
/// <c>build.sh jembench</c> installs) for the <c>alloc</c> suite's comparison row. Called through
/// function pointers with the normal GC transition, as the library calls jemalloc.
/// </summary>
public static unsafe class Mimalloc
{
    /// <summary>The file names tried, in order.</summary>
    public static IReadOnlyList<string> LibraryNames { get; } = ["libmimalloc.so.2", "libmimalloc.so"];

    private static readonly nint Library = Load();

    /// <summary>
    /// The environment variable that makes jembench treat mimalloc as missing when it is <c>1</c>: a
    /// test switch, so the skip path can be tested on a machine that has the library.
    /// </summary>
    public const string HideVariable = "JEMBENCH_HIDE_MIMALLOC";

    /// <summary>Whether mimalloc was found (and not hidden); if not, its benchmark is left out of the run with <see cref="MissingMessage"/>.</summary>
    public static bool IsAvailable => Library != 0 && Environment.GetEnvironmentVariable(HideVariable) != "1";

    /// <summary>What jembench prints when mimalloc is missing.</summary>
    public static string MissingMessage =>
        $"jembench: mimalloc not found ({string.Join(", ", LibraryNames)}): its row is skipped. Install Debian's libmimalloc2.0 (./build.sh jembench does).";

    /// <summary><c>mi_malloc</c>.</summary>
    public static delegate* unmanaged<nuint, void*> Malloc { get; } = (delegate* unmanaged<nuint, void*>)Export("mi_malloc");

    /// <summary><c>mi_free</c>.</summary>
    public static delegate* unmanaged<void*, void> Free { get; } = (delegate* unmanaged<void*, void>)Export("mi_free");

    private static nint Load()
    {
        foreach (string name in LibraryNames)
        {
            if (NativeLibrary.TryLoad(name, out nint handle))
            {
                return handle;
            }
        }

        return 0;
    }

    private static nint Export(string name) =>
        Library != 0 && NativeLibrary.TryGetExport(Library, name, out nint address) ? address : 0;
}
