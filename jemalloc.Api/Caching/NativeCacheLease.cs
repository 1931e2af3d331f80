using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Caching;
using jemalloc.Internal;
using jemalloc.Ledger;

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
public unsafe ref struct NativeCacheLease
{
    private const string TypeName = nameof(NativeCacheLease);

    // The segment the value is in, pinned until the lease ends; its memory cannot be reused or freed meanwhile.
    private readonly CacheSegment? _segment;
    private readonly byte* _value;
    private readonly int _length;
    // Spent by the first Dispose of any copy, so the pin is dropped exactly once.
    private readonly LedgerBlock _token;

    private NativeCacheLease(CacheSegment segment, byte* value, int length, LedgerBlock token)
    {
        _segment = segment;
        _value = value;
        _length = length;
        _token = token;
    }

    /// <summary>The value's length in bytes.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    public readonly int Length
    {
        get
        {
            ThrowIfEnded();
            return _length;
        }
    }

    /// <summary>Whether the lease is still open (not disposed through this or any copy).</summary>
    public readonly bool IsOpen => !_token.IsDefault && _token.IsLive;

    /// <summary>The value's bytes.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    [UnscopedRef]
    public readonly ReadOnlySpan<byte> Span
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            ThrowIfEnded();
            return new ReadOnlySpan<byte>(_value, _length);
        }
    }

    /// <summary>The value read as one <typeparamref name="T"/>.</summary>
    /// <exception cref="ObjectDisposedException">The lease has ended.</exception>
    /// <exception cref="InvalidOperationException">The value's length is not the size of <typeparamref name="T"/>.</exception>
    public readonly T Read<T>() where T : unmanaged
    {
        ThrowIfEnded();
        if (_length != sizeof(T))
        {
            NativeCache.ThrowWrongValueSize(_length, sizeof(T), typeof(T));
        }

        return Unsafe.ReadUnaligned<T>(_value);
    }

    /// <summary>Ends the lease; once, through any copy. Safe to call again.</summary>
    public readonly void Dispose()
    {
        if (_segment is not null && _token.SpendToken())
        {
            _segment.Unpin();
        }
    }

    /// <summary>
    /// Opens a lease on a value whose segment the caller has just pinned; on failure the pin is dropped.
    /// </summary>
    /// <exception cref="InvalidOperationException">The ledger is full.</exception>
    internal static NativeCacheLease Open(CacheSegment segment, byte* value, int length)
    {
        LedgerBlock token;
        try
        {
            token = LedgerBlock.TakeToken();
        }
        catch
        {
            segment.Unpin();
            throw;
        }

        return new NativeCacheLease(segment, value, length, token);
    }

    // A default lease holds nothing and ends nothing: its members give an empty value.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private readonly void ThrowIfEnded()
    {
        if (_segment is not null && !_token.IsLive)
        {
            ThrowHelper.ThrowEnded(TypeName, "look the key up again for a new lease");
        }
    }
}
