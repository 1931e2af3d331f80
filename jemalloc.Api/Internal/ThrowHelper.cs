using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace jemalloc.Internal;

/// <summary>
/// Throw sites kept out of line so that the checks on hot paths (indexers, validity) compile to a
/// compare and a never-taken branch.
/// </summary>
internal static class ThrowHelper
{
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowObjectDisposed(string typeName) =>
        throw new ObjectDisposedException(typeName, $"This {typeName} has been freed (through this or another copy, or by an arena reset); its memory can no longer be used.");

    // Indexers throw what arrays and Span<T> throw for the same mistake (CA2201 reserves the type for the runtime).
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "Same exception as T[] and Span<T> indexers.")]
    internal static void ThrowIndexOutOfRange(long index, long length) =>
        throw new IndexOutOfRangeException($"Index {index} is outside the bounds of the buffer (length {length}).");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowArgumentOutOfRange(string paramName, object? actualValue, string message) =>
        throw new ArgumentOutOfRangeException(paramName, actualValue, message);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowArgument(string paramName, string message) =>
        throw new ArgumentException(message, paramName);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowInvalidOperation(string message) =>
        throw new InvalidOperationException(message);

    // An allocation failure is reported as the runtime reports its own (CA2201 reserves the type for the runtime).
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "Same exception as a failed managed allocation.")]
    internal static void ThrowOutOfMemory(ulong bytes) =>
        throw new OutOfMemoryException($"jemalloc could not allocate {bytes:N0} bytes.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowSizeOverflow(long count, int elementSize) =>
        throw new OverflowException($"{count:N0} elements of {elementSize} bytes do not fit in the address space.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowNotSupported(string message) =>
        throw new NotSupportedException(message);

    /// <summary>
    /// The slow path of an indexer whose bounds check failed: a freed structure reports that it was
    /// freed (its length may no longer mean anything), a live one that the index is out of range.
    /// </summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowIndexOutOfRangeOrDisposed(long index, long length, in AllocationHandle handle, string typeName)
    {
        if (!handle.IsValid && length > 0)
        {
            ThrowObjectDisposed(typeName);
        }

        ThrowIndexOutOfRange(index, length);
    }
}
