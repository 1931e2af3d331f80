using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;

namespace jemalloc.Ledger;

/// <summary>The throws that need a ledger handle or a slot's state; the rest are in <see cref="ThrowHelper"/>, below every layer.</summary>
internal static class LedgerErrors
{
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

        throw ThrowHelper.Freed(typeName);
    }

    /// <summary>A free, dispose or reset refused because the allocation is acquired or leased.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowInUse(string typeName, string verb, long state) =>
        throw new InvalidOperationException(
            $"This {typeName} cannot be {verb}: it is {DescribeUse(state)}. Dispose each lease and hold and call Release() for each Acquire() first.");

    /// <summary>"acquired 2 time(s) and leased 1 time(s)" for a state word's counts.</summary>
    internal static string DescribeUse(long state)
    {
        int acquired = SlotState.Acquisitions(state);
        int leased = SlotState.Leases(state);
        return acquired != 0 && leased != 0 ? $"acquired {acquired} time(s) and leased {leased} time(s)"
            : acquired != 0 ? $"acquired {acquired} time(s)"
            : $"leased {leased} time(s) (a Lease() or Hold() not yet disposed, or an operation running on another thread)";
    }

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

    /// <summary>As <see cref="ThrowIndexFailure(long, long, AllocationHandle, string)"/> for a class.</summary>
    [DoesNotReturn]
    internal static void ThrowIndexFailure(long index, long length, AllocationHandle handle, object owner) =>
        throw IndexFailure(index, length, handle, TypeNames.Of(owner.GetType()));

    [MethodImpl(MethodImplOptions.NoInlining)]
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "Same exception as T[] and Span<T> indexers.")]
    internal static Exception IndexFailure(long index, long length, AllocationHandle handle, string typeName) =>
        handle != default && !handle.IsValid
            ? ThrowHelper.Freed(typeName)
            : new IndexOutOfRangeException($"Index {index} is outside the bounds of the buffer (length {length}).");
}
