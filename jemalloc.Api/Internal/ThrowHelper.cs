using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace jemalloc.Internal;

/// <summary>
/// Throw sites kept out of line so that the checks on hot paths (indexers, validity) compile to a
/// compare and a never-taken branch.
/// </summary>
/// <remarks>The throws that describe a ledger handle or slot state are in ThrowHelper.Ledger.cs, in the ledger's layer.</remarks>
internal static partial class ThrowHelper
{
    // The uses after the end fall in three kinds, each with its own message: an object that was
    // disposed (ThrowDisposed), a lease or scope that ended (ThrowEnded), and a structure whose memory
    // was freed (ThrowFreed, ThrowWentWithArena). Nothing is freed when a lease ends, so its message
    // must not say so.

    /// <summary>An object used after its <c>Dispose</c>.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowDisposed(string typeName) =>
        throw new ObjectDisposedException(typeName, $"This {typeName} has been disposed.");

    /// <summary>A lease or scope used after its <c>Dispose</c> (through it or a copy); <paramref name="whatNext"/> says how to get another.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowEnded(string typeName, string whatNext) => ThrowEnded(typeName, typeName, whatNext);

    /// <summary>
    /// A lease or scope used after its <c>Dispose</c>, whose message shows <paramref name="shownName"/> (a generic
    /// type with its argument) while <see cref="ObjectDisposedException.ObjectName"/> is <paramref name="typeName"/>.
    /// </summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowEnded(string typeName, string shownName, string whatNext) =>
        throw new ObjectDisposedException(typeName, $"This {shownName} has ended (it was disposed); {whatNext}.");

    /// <summary>An <see cref="ObjectDisposedException"/> with a message a cold path built.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowObjectDisposed(string typeName, string message) =>
        throw new ObjectDisposedException(typeName, message);

    /// <summary>A structure whose memory went with its arena's reset or dispose (the structure itself was not disposed).</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowWentWithArena(string typeName) =>
        throw new ObjectDisposedException(typeName, $"This {typeName} was made in a JemArena that was reset or disposed since, which freed its memory: it can no longer be used (only disposed).");

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

    /// <summary>The failure of an indexer's validity check; a throw-only body, as the ledger's index failures.</summary>
    [DoesNotReturn]
    internal static void ThrowFreed(string typeName) => throw Freed(typeName);

    /// <summary>The failure of an indexer's validity check in a class: the name is taken only here, off the hot path.</summary>
    [DoesNotReturn]
    internal static void ThrowFreed(object owner) => throw Freed(TypeNames.Of(owner.GetType()));

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static ObjectDisposedException Freed(string typeName) =>
        new(typeName, $"This {typeName} has been freed (through this or another copy, or by an arena reset); its memory can no longer be used.");
}
