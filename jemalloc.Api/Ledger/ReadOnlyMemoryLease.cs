using System.Diagnostics.CodeAnalysis;

namespace jemalloc;

/// <summary>
/// A <see cref="MemoryLease{T}"/> that only reads: for structures whose contents must not change,
/// such as <see cref="FixedUtf8String"/>. Its spans are bound to the variable that holds it, like a
/// <see cref="MemoryLease{T}"/>'s.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
public ref struct ReadOnlyMemoryLease<T>
    where T : unmanaged
{
    private readonly MemoryLease<T> _lease;
    private readonly int _length;

    internal ReadOnlyMemoryLease(MemoryLease<T> lease, int length)
    {
        _lease = lease;
        _length = length;
    }

    /// <summary>The number of elements.</summary>
    public readonly int Length => _length;

    /// <summary>Whether the lease is still open. Always <see langword="false"/> for <see langword="default"/>.</summary>
    public readonly bool IsOpen => _lease.IsOpen;

    /// <summary>The elements, read-only.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [UnscopedRef]
    public readonly ReadOnlySpan<T> Span => _length == 0 ? default : _lease.AsSpan(0, _length);

    /// <summary>The raw address of the first element, for a native call made while the lease is open.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public readonly nint Pointer => _lease.Pointer;

    /// <summary>Closes the lease; later calls, through this or any copy, do nothing.</summary>
    public readonly void Dispose() => _lease.Dispose();
}
