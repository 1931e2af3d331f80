using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Throws what a failed native allocation should throw, out of line of the measured code.</summary>
public static class NativeMemoryError
{
    /// <summary>Throws <see cref="OutOfMemoryException"/> naming the allocator and the size asked for.</summary>
    /// <exception cref="OutOfMemoryException">Always.</exception>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "The same exception a failed managed allocation raises.")]
    public static void Throw(string allocator, nuint bytes) =>
        throw new OutOfMemoryException($"{allocator} could not allocate {bytes:N0} bytes.");
}
