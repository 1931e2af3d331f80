using jemalloc.Ledger;

namespace jemalloc;

/// <summary>Hands a <see cref="NativeBufferWriter{T}"/>'s written elements over to an array without copying them.</summary>
public static class NativeBufferWriterExtensions
{
    /// <summary>
    /// Gives the writer's block to a new <see cref="HugeArray{T}"/> of exactly the written elements,
    /// without a copy: the block is shrunk to them (in place where jemalloc can) and owned by the array
    /// from then on. The writer starts again empty; memories and sequences taken from it before throw.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="writer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Nothing was written, a memory of the block is pinned or in use, or another thread is writing; the writer is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">The block could not be shrunk; the writer is unchanged.</exception>
    public static unsafe HugeArray<T> DetachToHugeArray<T>(this NativeBufferWriter<T> writer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(writer);
        LedgerBlock block = writer.Detach(long.MaxValue, out T* pointer, out long length);
        return new HugeArray<T>(block, pointer, length);
    }

    /// <summary>
    /// Gives the writer's block to a new <see cref="SafeArray{T}"/> of exactly the written elements,
    /// without a copy, as <see cref="DetachToHugeArray{T}"/> does.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="writer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Nothing was written, more than <see cref="int.MaxValue"/> elements were, a memory of the block is pinned or in use, or another thread is writing; the writer is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">The block could not be shrunk; the writer is unchanged.</exception>
    public static unsafe SafeArray<T> DetachToSafeArray<T>(this NativeBufferWriter<T> writer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(writer);
        LedgerBlock block = writer.Detach(int.MaxValue, out T* pointer, out long length);
        return new SafeArray<T>(block, pointer, (int)length);
    }
}
