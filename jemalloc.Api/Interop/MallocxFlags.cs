using System.Numerics;

namespace jemalloc;

/// <summary>
/// The <c>flags</c> argument of jemalloc's <c>*allocx</c> functions, built from typed parts instead
/// of raw bits: <c>MallocxFlags.Align(64) | MallocxFlags.Zero | MallocxFlags.Arena(3)</c>.
/// </summary>
public readonly struct MallocxFlags : IEquatable<MallocxFlags>
{
    internal const int ZeroBit = 0x40;
    internal const int TcacheNoneBits = 0x100;
    internal const int LgAlignMask = 0x3F;
    internal const int TcacheMask = 0xFFF00;
    internal const int ArenaShift = 20;
    internal const uint ArenaLimit = (1u << 12) - 1;

    /// <summary>The raw value passed to jemalloc.</summary>
    public int Value { get; }

    private MallocxFlags(int value) => Value = value;

    /// <summary>Wraps raw <c>MALLOCX_*</c> bits, e.g. from C code or an earlier API that passed an <see cref="int"/>.</summary>
    /// <param name="value">The flag bits, as jemalloc's macros compose them.</param>
    public static MallocxFlags FromValue(int value) => new(value);

    /// <summary>No flags: the default alignment, arena and thread cache; memory not zeroed.</summary>
    public static MallocxFlags None => default;

    /// <summary><c>MALLOCX_ZERO</c>: the memory is zero-filled.</summary>
    public static MallocxFlags Zero => new(ZeroBit);

    /// <summary><c>MALLOCX_TCACHE_NONE</c>: bypass the thread cache (required for memory an arena reset may free).</summary>
    public static MallocxFlags NoThreadCache => new(TcacheNoneBits);

    /// <summary><c>MALLOCX_LG_ALIGN(lg)</c>: align to 2^<paramref name="lgAlignment"/> bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="lgAlignment"/> is not in 0..63.</exception>
    public static MallocxFlags LgAlign(int lgAlignment)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(lgAlignment);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(lgAlignment, LgAlignMask);
        return new(lgAlignment);
    }

    /// <summary><c>MALLOCX_ALIGN(a)</c>: align to <paramref name="alignment"/> bytes, a power of two.</summary>
    /// <exception cref="ArgumentException"><paramref name="alignment"/> is not a power of two.</exception>
    public static MallocxFlags Align(nuint alignment)
    {
        if (!BitOperations.IsPow2(alignment))
        {
            throw new ArgumentException($"The alignment must be a power of two; {alignment} is not.", nameof(alignment));
        }

        return new(BitOperations.Log2(alignment));
    }

    /// <summary><c>MALLOCX_TCACHE(tc)</c>: use the explicit thread cache <paramref name="cache"/> (from <c>tcache.create</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="cache"/> does not fit the flag's bits.</exception>
    public static MallocxFlags ThreadCache(uint cache)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(cache, (uint)(TcacheMask >> 8) - 2);
        return new((int)((cache + 2) << 8));
    }

    /// <summary><c>MALLOCX_ARENA(a)</c>: allocate in arena <paramref name="arena"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="arena"/> does not fit the flag's bits.</exception>
    public static MallocxFlags Arena(uint arena)
    {
        // jemalloc keeps (arena + 1) in the 12 bits from bit 20, the sign bit included: every index
        // below MALLOCX_ARENA_LIMIT (4095) fits.
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(arena, ArenaLimit);
        return new(unchecked((int)((arena + 1) << ArenaShift)));
    }

    /// <summary>The arena named by these flags, or <see langword="null"/> for automatic arena choice.</summary>
    public uint? ArenaIndex => (Value >>> ArenaShift) is var plusOne and not 0 ? (uint)plusOne - 1 : null;

    /// <summary>Combines flags.</summary>
    public static MallocxFlags operator |(MallocxFlags left, MallocxFlags right) => new(left.Value | right.Value);

    /// <summary>Combines flags.</summary>
    public static MallocxFlags BitwiseOr(MallocxFlags left, MallocxFlags right) => left | right;

    /// <summary>The raw value.</summary>
    public static implicit operator int(MallocxFlags flags) => flags.Value;

    /// <summary>The raw value.</summary>
    public int ToInt32() => Value;

    /// <inheritdoc/>
    public bool Equals(MallocxFlags other) => Value == other.Value;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is MallocxFlags other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => Value;

    /// <summary>Compares flags.</summary>
    public static bool operator ==(MallocxFlags left, MallocxFlags right) => left.Equals(right);

    /// <summary>Compares flags.</summary>
    public static bool operator !=(MallocxFlags left, MallocxFlags right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() => $"0x{Value:X}";
}
