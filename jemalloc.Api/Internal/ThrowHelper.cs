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

    /// <summary>A structure whose memory went with its arena's reset or dispose (the structure itself was not disposed).</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowWentWithArena(string typeName) =>
        throw new ObjectDisposedException(typeName, $"This {typeName} was made in a JemArena that was reset or disposed since, which freed its memory: it can no longer be used (only disposed).");

    /// <summary>
    /// The use of an allocation that is not live: a <see langword="default"/> handle (a structure that
    /// never had memory, e.g. <c>default(FixedBuffer&lt;T&gt;)</c>) is told apart from a freed one.
    /// Both are <see cref="ObjectDisposedException"/>, as the structures document: there is no memory
    /// behind either, and a caller handles both alike.
    /// </summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowObjectDisposed(string typeName, AllocationHandle handle)
    {
        if (handle == default)
        {
            throw new ObjectDisposedException(typeName, $"This {typeName} is default: an empty {typeName} that never had memory, so it cannot be used this way. Create one with a constructor.");
        }

        ThrowObjectDisposed(typeName);
    }

    /// <summary>A free, dispose or reset refused because the allocation is acquired or leased.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowInUse(string typeName, string verb, long state) =>
        throw new InvalidOperationException(
            $"This {typeName} cannot be {verb}: it is {DescribeUse(state)}. Dispose each lease and call Release() for each Acquire() first.");

    /// <summary>"acquired 2 time(s) and leased 1 time(s)" for a state word's counts.</summary>
    internal static string DescribeUse(long state)
    {
        int acquired = SlotState.Acquisitions(state);
        int leased = SlotState.Leases(state);
        return acquired != 0 && leased != 0 ? $"acquired {acquired} time(s) and leased {leased} time(s)"
            : acquired != 0 ? $"acquired {acquired} time(s)"
            : $"leased {leased} time(s) (a Lease() not yet disposed, or an operation running on another thread)";
    }

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

    /// <summary>An allocation failure with its own message.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "Same exception as a failed managed allocation.")]
    internal static void ThrowOutOfMemory(string message) =>
        throw new OutOfMemoryException(message);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowSizeOverflow(long count, int elementSize) =>
        throw new OverflowException($"{count:N0} elements of {elementSize} bytes do not fit in the address space.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowNotSupported(string message) =>
        throw new NotSupportedException(message);

    /// <summary>
    /// The failure of an indexer's bounds check. Unlike the helpers above it is not marked
    /// NoInlining: a method whose body is only a <see langword="throw"/> is recognised by the JIT as
    /// never returning, so the call is moved out of the loop and the loop's loads can be hoisted.
    /// A freed structure reports that it was freed (its length no longer means anything), a live one
    /// that the index is out of range.
    /// </summary>
    [DoesNotReturn]
    internal static void ThrowIndexFailure(long index, long length, AllocationHandle handle, string typeName) =>
        throw IndexFailure(index, length, handle, typeName);

    /// <summary>The failure of an indexer's validity check; a throw-only body, as <see cref="ThrowIndexFailure(long, long, AllocationHandle, string)"/>.</summary>
    [DoesNotReturn]
    internal static void ThrowFreed(string typeName) => throw Freed(typeName);

    /// <summary>The failure of an indexer's validity check in a class: the name is taken only here, off the hot path.</summary>
    [DoesNotReturn]
    internal static void ThrowFreed(object owner) => throw Freed(owner.GetType().Name);

    /// <summary>As <see cref="ThrowIndexFailure(long, long, AllocationHandle, string)"/> for a class.</summary>
    [DoesNotReturn]
    internal static void ThrowIndexFailure(long index, long length, AllocationHandle handle, object owner) =>
        throw IndexFailure(index, length, handle, owner.GetType().Name);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ObjectDisposedException Freed(string typeName) =>
        new(typeName, $"This {typeName} has been freed (through this or another copy, or by an arena reset); its memory can no longer be used.");

    [MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "Same exception as T[] and Span<T> indexers.")]
    private static Exception IndexFailure(long index, long length, AllocationHandle handle, string typeName) =>
        handle != default && !handle.IsValid
            ? Freed(typeName)
            : new IndexOutOfRangeException($"Index {index} is outside the bounds of the buffer (length {length}).");
}
