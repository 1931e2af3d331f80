using System.Runtime.CompilerServices;
using jemalloc.Internal;

namespace jemalloc.Memory;

/// <summary>
/// The one conversion of an element count to bytes, with its overflow check: every structure, the
/// writer and the huge-page policy size an allocation here, once per allocation.
/// </summary>
internal static unsafe class AllocationSize
{
    /// <summary>The bytes of <paramref name="count"/> elements of <typeparamref name="T"/>.</summary>
    /// <exception cref="OverflowException">The bytes exceed the address space (<see cref="nint.MaxValue"/>), or <paramref name="count"/> is negative.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static nuint Of<T>(long count)
        where T : unmanaged
    {
        if ((ulong)count > (ulong)nint.MaxValue / (ulong)sizeof(T))
        {
            ThrowHelper.ThrowSizeOverflow(count, sizeof(T));
        }

        return (nuint)count * (nuint)sizeof(T);
    }
}
