using System.Runtime.InteropServices;

namespace jemalloc;

// Placeholder until the zero-fill branch is merged.
internal static unsafe class ZeroFill
{
    internal static void ClearUnlessKnownZero(void* address, nuint size) => NativeMemory.Clear(address, size);
}
