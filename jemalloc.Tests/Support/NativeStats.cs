using System.Text;
using jemalloc.Interop;

namespace jemalloc.Tests.Support;

/// <summary>
/// Reads jemalloc's allocated-bytes statistic straight through <c>mallctl</c> (the tests do not depend
/// on the public typed mallctl API).
/// </summary>
internal static unsafe class NativeStats
{
    /// <summary>
    /// Bytes the application holds from jemalloc: <c>stats.allocated</c> minus what sits in thread
    /// caches (freed by the application, kept by a thread for reuse, which jemalloc still counts as
    /// allocated). The calling thread's cache is flushed and the statistics refreshed first.
    /// </summary>
    internal static long AllocatedBytes()
    {
        Check(Mallctl("thread.tcache.flush", null, null, null, 0), "thread.tcache.flush");
        ulong epoch = 1;
        Check(Mallctl("epoch", null, null, &epoch, sizeof(ulong)), "epoch");
        return (long)ReadSize("stats.allocated") - (long)ReadSize("stats.arenas.4096.tcache_bytes") - (long)ReadSize("stats.arenas.4096.tcache_stashed_bytes");
    }

    private static nuint ReadSize(string name)
    {
        nuint value = 0;
        nuint length = (nuint)sizeof(nuint);
        Check(Mallctl(name, &value, &length, null, 0), name);
        return value;
    }

    private static int Mallctl(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        byte[] utf8 = Encoding.ASCII.GetBytes(name + "\0");
        fixed (byte* namePointer = utf8)
        {
            return JemNative.Mallctl(namePointer, oldValue, oldLength, newValue, newLength);
        }
    }

    private static void Check(int error, string name)
    {
        if (error != 0)
        {
            throw new InvalidOperationException($"mallctl(\"{name}\") failed with error {error}.");
        }
    }
}
