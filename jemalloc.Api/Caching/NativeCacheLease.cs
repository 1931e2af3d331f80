using System.Diagnostics.CodeAnalysis;

namespace jemalloc;

/// <summary>
/// A value found in a <see cref="NativeCache"/>, kept alive while the lease is open: other threads may
/// evict, replace, remove or clear the entry meanwhile, and the bytes stay as they were until the lease
/// ends. Use it as <c>using NativeCacheLease lease = ...;</c>.
/// </summary>
/// <remarks>
/// The lease is a <see langword="ref struct"/>: the span it gives is bound to the variable that holds it.
/// <see cref="Dispose"/> ends the lease once, through this or any copy; its members throw
/// <see cref="ObjectDisposedException"/> afterwards. <see langword="default"/> is an empty lease that holds nothing.
/// </remarks>
public ref struct NativeCacheLease
{
    /// <summary>The value's length in bytes.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    public readonly int Length => throw new NotImplementedException();

    /// <summary>Whether the lease is still open (not disposed through this or any copy).</summary>
    public readonly bool IsOpen => throw new NotImplementedException();

    /// <summary>The value's bytes.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    [UnscopedRef]
    public readonly ReadOnlySpan<byte> Span => throw new NotImplementedException();

    /// <summary>The value read as one <typeparamref name="T"/>.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    /// <exception cref="InvalidOperationException">The value's length is not the size of <typeparamref name="T"/>.</exception>
    public readonly T Read<T>() where T : unmanaged => throw new NotImplementedException();

    /// <summary>Ends the lease; once, through any copy. Safe to call again.</summary>
    public void Dispose() => throw new NotImplementedException();
}
