using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;

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
    private const string TypeName = "ReadOnlyMemoryLease";

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
    public readonly ReadOnlySpan<T> Span
    {
        get
        {
            ThrowIfEnded();
            return _length == 0 ? default : _lease.AsSpan(0, _length);
        }
    }

    /// <summary>The raw address of the first element, for a native call made while the lease is open.</summary>
    /// <exception cref="ObjectDisposedException">The lease was disposed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public readonly nint Pointer
    {
        get
        {
            ThrowIfEnded();
            return _lease.Pointer;
        }
    }

    /// <summary>Closes the lease; later calls, through this or any copy, do nothing.</summary>
    public readonly void Dispose() => _lease.Dispose();

    // Checked here, before the inner lease's own check, so that the message names this type.
    private readonly void ThrowIfEnded()
    {
        if (_lease.HasEnded)
        {
            ThrowEnded();
        }
    }

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowEnded() =>
        ThrowHelper.ThrowEnded(TypeName, $"{TypeName}<{typeof(T).Name}>", "take a new lease");
}
