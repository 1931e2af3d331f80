using System.Text;
using jemalloc.Interop;
using jemalloc.Ledger;

namespace jemalloc.Tests.Support;

/// <summary>Creates and destroys explicit jemalloc arenas through raw mallctl, for tests of arena invalidation.</summary>
internal static unsafe class TestArena
{
    internal static uint Create()
    {
        uint arena;
        nuint length = sizeof(uint);
        Assert.Equal(0, Mallctl("arenas.create", &arena, &length));
        return arena;
    }

    /// <summary>Destroys the arena, freeing everything still allocated in it.</summary>
    /// <remarks>
    /// First lets the arena's blocks out of checked mode's quarantine, as the library's own destroy
    /// does: raw mallctl bypasses it, and a block left there would be read after its memory is gone.
    /// </remarks>
    internal static void Destroy(uint arena)
    {
        Quarantine.ReleaseArena(arena);
        Assert.Equal(0, Mallctl($"arena.{arena}.destroy", null, null));
    }

    private static int Mallctl(string name, void* oldValue, nuint* oldLength)
    {
        byte[] utf8 = Encoding.ASCII.GetBytes(name + "\0");
        fixed (byte* namePointer = utf8)
        {
            return JemNative.Mallctl(namePointer, oldValue, oldLength, null, 0);
        }
    }
}
